#!/usr/bin/env python3
"""Copies one of etcd's .proto files with its Go and REST annotations removed.

etcd's protos import gogoproto and google/api annotations, which only steer Go
code generation and the JSON gateway; the wire format does not depend on them.
Usage: strip_etcd_proto.py SRC DST
"""
import re
import sys


def drop_http_options(text):
    """Removes every `option (google.api.http) = { ... };`, braces nested."""
    marker = "option (google.api.http)"
    out, i = [], 0
    while (start := text.find(marker, i)) >= 0:
        out.append(text[i:start])
        j = text.index("{", start)
        depth = 0
        while True:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = text.index(";", j) + 1
    out.append(text[i:])
    return "".join(out)


src, dst = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()
text = re.sub(r'^import "(gogoproto/gogo|google/api/annotations)\.proto";\n', "", text, flags=re.M)
text = re.sub(r"^\s*option \(gogoproto\.[^;]*;\n", "", text, flags=re.M)
text = drop_http_options(text)
text = re.sub(r"\s*\[\(gogoproto\.[^\]]*\]", "", text)  # field options
if "gogoproto" in text or "google.api" in text:
    sys.exit(f"{src}: annotations left after stripping")
open(dst, "w", encoding="utf-8").write(text)
