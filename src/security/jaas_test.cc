// ParseJaasConfig against the sasl.jaas.config values of Kafka's documentation
// and the ways they go wrong.
#include "security/jaas.h"

#include <gtest/gtest.h>

namespace strata::security {
namespace {

JaasConfig ParseOk(std::string_view text) {
  auto config = ParseJaasConfig(text);
  EXPECT_TRUE(config.ok()) << config.error().message;
  return config.ok() ? *config : JaasConfig{};
}

std::string ParseError(std::string_view text) {
  auto config = ParseJaasConfig(text);
  EXPECT_FALSE(config.ok()) << text;
  if (config.ok()) return "";
  EXPECT_EQ(config.error().code, Errc::kInvalidArgument);
  return config.error().message;
}

TEST(JaasTest, PlainLoginModuleWithUsers) {
  JaasConfig c = ParseOk(
      "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
      "password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";");
  EXPECT_EQ(c.login_module, "org.apache.kafka.common.security.plain.PlainLoginModule");
  EXPECT_EQ(c.control_flag, "required");
  EXPECT_EQ(c.options.size(), 4u);
  EXPECT_EQ(c.options["username"], "admin");
  EXPECT_EQ(c.options["password"], "admin-secret");
  auto users = PlainUsers(c);
  EXPECT_EQ(users, (std::map<std::string, std::string>{{"admin", "admin-secret"},
                                                       {"alice", "alice-secret"}}));
}

TEST(JaasTest, OptionsOnSeveralLinesWithCommentsAndUnquotedValues) {
  JaasConfig c = ParseOk(
      "  org.apache.kafka.common.security.scram.ScramLoginModule\n"
      "\tREQUIRED // the flag is case-insensitive\n"
      "  username=\"alice\" /* block\n comment */\n"
      "  password=\"alice-secret\"\r\n"
      "  tokenauth=false\n"
      "  unsecuredLoginStringClaim_sub=thePrincipalName\n"
      "  ;  \n");
  EXPECT_EQ(c.login_module, "org.apache.kafka.common.security.scram.ScramLoginModule");
  EXPECT_EQ(c.control_flag, "required");
  EXPECT_EQ(c.options["username"], "alice");
  EXPECT_EQ(c.options["password"], "alice-secret");
  EXPECT_EQ(c.options["tokenauth"], "false");
  EXPECT_EQ(c.options["unsecuredLoginStringClaim_sub"], "thePrincipalName");
  EXPECT_TRUE(PlainUsers(c).empty());
}

TEST(JaasTest, QuotesAndEscapes) {
  JaasConfig c = ParseOk(R"(Module optional a="x\"y" b='single "q"' c="back\\slash" d="tab\there" )"
                         R"(e="semi;colon = equals" f="" g="\101\60" h="slash/in/quotes";)");
  EXPECT_EQ(c.control_flag, "optional");
  EXPECT_EQ(c.options["a"], "x\"y");
  EXPECT_EQ(c.options["b"], "single \"q\"");
  EXPECT_EQ(c.options["c"], "back\\slash");
  EXPECT_EQ(c.options["d"], "tab\there");
  EXPECT_EQ(c.options["e"], "semi;colon = equals");
  EXPECT_EQ(c.options["f"], "");
  EXPECT_EQ(c.options["g"], "A0");
  EXPECT_EQ(c.options["h"], "slash/in/quotes");
}

TEST(JaasTest, AllControlFlagsAndNoOptions) {
  for (const char* flag : {"required", "requisite", "sufficient", "optional", "Sufficient"}) {
    JaasConfig c = ParseOk(std::string("M ") + flag + ";");
    EXPECT_TRUE(c.options.empty());
  }
  EXPECT_EQ(ParseOk("M Requisite;").control_flag, "requisite");
}

TEST(JaasTest, RepeatedKeyKeepsTheLastValue) {
  EXPECT_EQ(ParseOk("M required k=\"1\" k=\"2\";").options.at("k"), "2");
}

TEST(JaasTest, Errors) {
  EXPECT_NE(ParseError("M required username=\"a\"").find("not terminated by semi-colon"),
            std::string::npos);
  EXPECT_NE(ParseError("M mandatory username=\"a\";")
                .find("Invalid login module control flag 'mandatory'"),
            std::string::npos);
  EXPECT_NE(ParseError("M required password=\"abc;").find("Unterminated quoted string"),
            std::string::npos);
  EXPECT_NE(ParseError("M required password=\"abc\n  user=\"x\";").find("Unterminated"),
            std::string::npos);
  EXPECT_NE(ParseError("M required username=;").find("Value not specified for key 'username'"),
            std::string::npos);
  EXPECT_NE(ParseError("M required username \"a\";").find("Value not specified"),
            std::string::npos);
  EXPECT_NE(ParseError("M required =\"a\";").find("Option name expected"), std::string::npos);
  EXPECT_NE(ParseError("").find("Login module not specified"), std::string::npos);
  EXPECT_NE(ParseError("  // only a comment\n").find("Login module not specified"),
            std::string::npos);
  EXPECT_NE(ParseError("M;").find("control flag not specified"), std::string::npos);
  EXPECT_NE(ParseError("M").find("control flag not specified"), std::string::npos);
  EXPECT_NE(ParseError("; M required;").find("Login module class expected"), std::string::npos);
  EXPECT_NE(ParseError("A required; B required;").find("contains 2 login modules"),
            std::string::npos);
  // Base64 values with '=' must be quoted, as in Kafka.
  EXPECT_NE(ParseError("M required key=abc==;").find("Option name expected"), std::string::npos);
}

TEST(JaasTest, PlainUsersIgnoresOtherOptionsAndEmptyNames) {
  JaasConfig c;
  c.options = {{"user_", "x"}, {"user_bob", "pw"}, {"username", "admin"}, {"users", "y"}};
  EXPECT_EQ(PlainUsers(c), (std::map<std::string, std::string>{{"bob", "pw"}}));
}

}  // namespace
}  // namespace strata::security
