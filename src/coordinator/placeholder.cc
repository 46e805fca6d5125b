// placeholder until the group coordinator lands
