"""TLS and SASL set-up of bench/security.py, the same for both systems: a CA and a broker
certificate made with the openssl CLI (as tests/integration/certs.py makes them: RSA 2048, the
broker's subjectAltName DNS:localhost and IP:127.0.0.1), the broker's PEM keystore (private key,
certificate, CA in one file, what Kafka reads with ssl.keystore.type=PEM and Strata by default),
the listener settings (a second listener, SASL_SSL, next to the PLAINTEXT one the harness sets
up and administers the broker through), and the client properties for SASL_SSL, for the Java
client and for librdkafka (`strata bench`).

Both brokers get the same keys with the same values: Strata reads Kafka's names (docs/security.md).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

MECHANISM = "SCRAM-SHA-512"
TLS_VERSION = "TLSv1.3"
# Pinned on both brokers so both negotiate the same suite with every client (it is also what
# both would pick by default with the Java client and with Python's OpenSSL).
CIPHER = "TLS_AES_256_GCM_SHA384"
SCRAM_ITERATIONS = 4096  # kafka-configs' default for SCRAM-SHA-512; the minimum both accept
LISTENER = "SASL_SSL"


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr}")


def make_certs(directory: Path) -> tuple[Path, Path]:
    """A self-signed CA and a broker certificate it signs (RSA 2048, SAN localhost and
    127.0.0.1): returns (CA certificate, broker PEM keystore = key + certificate + CA)."""
    directory.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.pem", "-days", "7", "-subj", "/CN=Strata Bench CA", cwd=directory)
    (directory / "broker.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out",
             "broker.csr", "-subj", "/CN=localhost", cwd=directory)
    _openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "broker.crt", "-days", "7", "-extfile", "broker.ext",
             cwd=directory)
    keystore = directory / "broker.keystore.pem"
    keystore.write_text((directory / "broker.key").read_text()
                        + (directory / "broker.crt").read_text()
                        + (directory / "ca.pem").read_text())
    return directory / "ca.pem", keystore


def add_sasl_ssl_listener(config: dict[str, str], port: int, keystore: Path) -> None:
    """Adds a SASL_SSL listener on 127.0.0.1:`port` to a broker config of harness/brokers.py
    (Kafka's or Strata's), leaving its PLAINTEXT listener (and Kafka's CONTROLLER one) as it
    is and inter-broker traffic on PLAINTEXT. SCRAM-SHA-512 only, TLSv1.3 only, one cipher
    suite, no client certificates; the SCRAM users are created after start."""
    endpoint = f"{LISTENER}://127.0.0.1:{port}"
    config["listeners"] += f",{endpoint}"
    config["advertised.listeners"] += f",{endpoint}"
    mapping = config.get("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT")
    config["listener.security.protocol.map"] = f"{mapping},{LISTENER}:{LISTENER}"
    config["inter.broker.listener.name"] = "PLAINTEXT"
    config.update({
        "sasl.enabled.mechanisms": MECHANISM,
        # Kafka needs a JAAS entry per listener and mechanism even when the users come from the
        # metadata (kafka-configs); Strata reads the same key.
        f"listener.name.{LISTENER.lower()}.{MECHANISM.lower()}.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.enabled.protocols": TLS_VERSION,
        "ssl.cipher.suites": CIPHER,
        "ssl.client.auth": "none",
    })


def java_client_properties(path: Path, ca: Path, user: str, password: str) -> Path:
    """The Java client's settings for the SASL_SSL listener (ProducerPerformance,
    ConsumerPerformance): SCRAM-SHA-512, TLSv1.3, the CA as a PEM truststore, the server's
    address checked against its certificate (ssl.endpoint.identification.algorithm's default)."""
    path.write_text(
        f"security.protocol={LISTENER}\n"
        f"sasl.mechanism={MECHANISM}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
        f"ssl.protocol={TLS_VERSION}\n"
        f"ssl.enabled.protocols={TLS_VERSION}\n"
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={ca}\n")
    return path


def librdkafka_client_properties(path: Path, ca: Path, user: str, password: str) -> Path:
    """The same settings for librdkafka (`strata bench produce|consume --command-config`):
    SCRAM-SHA-512, the CA as a PEM file, the server's address checked against its certificate
    as the Java client does (librdkafka's default since 2.0, set anyway). librdkafka has no
    property for the TLS version: the broker allows only TLSv1.3."""
    path.write_text(
        f"security.protocol={LISTENER}\n"
        f"sasl.mechanism={MECHANISM}\n"
        f"sasl.username={user}\n"
        f"sasl.password={password}\n"
        f"ssl.ca.location={ca}\n"
        "ssl.endpoint.identification.algorithm=https\n")
    return path


def kernel_tls() -> dict:
    """Whether this kernel offers kernel TLS (the `tls` module: /proc/net/tls_stat exists once
    it is loaded), and its counters, so a run records whether a broker could use it."""
    stat = Path("/proc/net/tls_stat")
    if not stat.exists():
        return {"available": False, "note": "no /proc/net/tls_stat (tls module not loaded)"}
    counters = {}
    for line in stat.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counters[parts[0]] = int(parts[1])
    return {"available": True, "counters": counters}


def openssl_versions(strata_bin: Path) -> dict:
    """The openssl CLI's version and the libssl Strata links (ldd), for the report."""
    out = {}
    try:
        out["openssl_cli"] = subprocess.run(["openssl", "version"], capture_output=True,
                                            text=True, timeout=10).stdout.strip()
        ldd = subprocess.run(["ldd", str(strata_bin)], capture_output=True, text=True,
                             timeout=10).stdout
        out["strata_libssl"] = next((ln.split("=>")[0].strip() for ln in ldd.splitlines()
                                     if "libssl" in ln), "static or none")
    except OSError as e:
        out["error"] = str(e)
    try:
        r = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
        out["java"] = (r.stderr or r.stdout).splitlines()[0].strip()
    except (OSError, IndexError) as e:
        out["java"] = f"? ({e})"
    return out
