"""Test certificates made with the openssl CLI: a CA, and certificates it signs for brokers
(subjectAltName localhost and 127.0.0.1) and clients, in the forms Kafka operators configure:
a PEM keystore (private key + certificate chain in one file, as ssl.keystore.type=PEM reads),
an encrypted PEM key, a PKCS12 bundle."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"openssl {' '.join(args)}:\n{r.stderr}"


@dataclass
class Cert:
    key: Path        # PEM private key, unencrypted
    cert: Path       # PEM certificate
    keystore: Path   # PEM: key + certificate + CA (Kafka's PEM keystore)


class CA:
    """A self-signed CA in `directory`; `issue` signs certificates with it."""

    def __init__(self, directory: Path, name: str = "Strata Test CA"):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = self.dir / "ca.key"
        self.cert = self.dir / "ca.pem"
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", self.key.name,
                 "-out", self.cert.name, "-days", "3", "-subj", f"/CN={name}", cwd=self.dir)

    def issue(self, name: str, cn: str, san: str = "DNS:localhost,IP:127.0.0.1") -> Cert:
        ext = self.dir / f"{name}.ext"
        ext.write_text(f"subjectAltName={san}\n")
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
                 "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=self.dir)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", self.cert.name, "-CAkey",
                 self.key.name, "-CAcreateserial", "-out", f"{name}.crt", "-days", "3",
                 "-extfile", ext.name, cwd=self.dir)
        keystore = self.dir / f"{name}.keystore.pem"
        keystore.write_text((self.dir / f"{name}.key").read_text() +
                            (self.dir / f"{name}.crt").read_text() + self.cert.read_text())
        return Cert(self.dir / f"{name}.key", self.dir / f"{name}.crt", keystore)

    def encrypted_keystore(self, c: Cert, password: str) -> Path:
        """A PEM keystore whose key is encrypted with `password` (ssl.key.password)."""
        enc = self.dir / f"{c.key.stem}.enc.key"
        _openssl("pkcs8", "-topk8", "-in", c.key.name, "-out", enc.name, "-passout",
                 f"pass:{password}", "-v2", "aes-256-cbc", cwd=self.dir)
        out = self.dir / f"{c.key.stem}.enc.keystore.pem"
        out.write_text(enc.read_text() + c.cert.read_text() + self.cert.read_text())
        return out

    def pkcs12(self, c: Cert, password: str) -> Path:
        out = self.dir / f"{c.key.stem}.p12"
        _openssl("pkcs12", "-export", "-inkey", c.key.name, "-in", c.cert.name, "-certfile",
                 self.cert.name, "-out", out.name, "-passout", f"pass:{password}", cwd=self.dir)
        return out
