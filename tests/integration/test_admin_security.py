"""The other doors: the admin HTTP API and console over HTTPS with bearer tokens (read and
admin roles) or client certificates, and the `strata` CLI with a Kafka-style --command-config
(SASL over TLS to the Kafka listener, the token and CA for the admin API).

Without credentials the API answers 401, a read-only token may GET but not POST (403), an admin
token or an admin client certificate may do both; plain HTTP to the HTTPS port gets nothing;
the console loads over HTTPS with a token. `strata topic` and `strata cluster` work through a
SASL_SSL listener and an HTTPS admin API with the settings of one properties file, and a wrong
password is refused."""
from __future__ import annotations

import ssl
import subprocess
import urllib.error
import urllib.request

import pytest

import conftest
import kit
from certs import CA
from ports import free_port

pytestmark = pytest.mark.skipif(kit.against_kafka(), reason="Strata's admin API")

ADMIN_TOKEN = "admin-token-0123456789abcdef"
READ_TOKEN = "read-token-0123456789abcdef"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
              'user_ops="ops-secret";')


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    return CA(tmp_path_factory.mktemp("certs"))


@pytest.fixture
def secure_broker(broker_factory, ca, tmp_path):
    cert = ca.issue("admin-broker", "localhost")
    tokens = tmp_path / "admin-tokens"
    tokens.write_text(f"# token role\n{ADMIN_TOKEN} admin\n{READ_TOKEN} read\n")
    admin_port, sasl_port = free_port(), free_port()
    b = broker_factory(config={
        "listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},CLIENT://localhost:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CLIENT:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.client.plain.sasl.jaas.config": PLAIN_JAAS,
        "ssl.keystore.location": str(cert.keystore),
        "strata.admin.listener": f"127.0.0.1:{admin_port}",
        "strata.admin.ssl.keystore.location": str(cert.keystore),
        "strata.admin.ssl.truststore.location": str(ca.cert),
        "strata.admin.ssl.client.auth": "requested",
        "strata.admin.token.file": str(tokens),
        "strata.admin.admin.principals": "User:CN=operator",
        "strata.etcd.password": "never-shown-etcd-secret"})
    b.admin_url = f"https://localhost:{admin_port}"
    b.sasl_bootstrap = f"localhost:{sasl_port}"
    return b


def call(b, ca, method: str, path: str, token: str | None = None, cert=None) -> tuple[int, str]:
    context = ssl.create_default_context(cafile=str(ca.cert))
    if cert is not None:
        context.load_cert_chain(str(cert.cert), str(cert.key))
    req = urllib.request.Request(b.admin_url + path, method=method,
                                 data=b"" if method == "POST" else None)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, context=context, timeout=15) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_admin_api_needs_a_token_or_certificate_with_the_right_role(secure_broker, ca):
    b = secure_broker
    assert call(b, ca, "GET", "/v1/cluster")[0] == 401
    assert call(b, ca, "GET", "/v1/cluster", token="not-a-token-of-ours-at-all")[0] == 401
    status, body = call(b, ca, "GET", "/v1/cluster", token=READ_TOKEN)
    assert status == 200 and '"brokers"' in body, body
    assert call(b, ca, "GET", "/metrics", token=READ_TOKEN)[0] == 200
    # Actions need the admin role.
    assert call(b, ca, "POST", "/v1/balancer/pause", token=READ_TOKEN)[0] == 403
    assert call(b, ca, "POST", "/v1/balancer/pause", token=ADMIN_TOKEN)[0] != 403
    assert call(b, ca, "POST", "/v1/balancer/resume")[0] == 401
    # A client certificate: the listed principal is an admin, another trusted one may read.
    operator = ca.issue("operator", "operator")
    viewer = ca.issue("viewer", "viewer")
    assert call(b, ca, "POST", "/v1/balancer/resume", cert=operator)[0] != 403
    assert call(b, ca, "GET", "/v1/topics", cert=viewer)[0] == 200
    assert call(b, ca, "POST", "/v1/balancer/resume", cert=viewer)[0] == 403
    # The console page loads without a token (a browser cannot send one while navigating);
    # its API calls send the token it took from #token=.
    status, html = call(b, ca, "GET", "/console")
    assert status == 200 and "Authorization" in html and "strata-token" in html
    # Plain HTTP to the HTTPS port gets no answer.
    with pytest.raises(Exception):
        urllib.request.urlopen(b.admin_url.replace("https", "http") + "/v1/cluster", timeout=10)
    kit.wait_until(lambda: "admin API: TLS handshake failed" in b.log_tail(), 10,
                   "the refused handshake logged")


def test_the_cli_takes_its_client_settings_from_a_command_config(secure_broker, ca, tmp_path):
    b = secure_broker
    props = tmp_path / "cli.properties"
    props.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="ops" password="ops-secret";\n'
        f"ssl.truststore.location={ca.cert}\nstrata.admin.token={READ_TOKEN}\n")
    topic = kit.unique_topic("cli-secure")

    def strata(*args: str, ok: bool = True) -> str:
        r = subprocess.run([conftest.STRATA_BIN, *args], capture_output=True, text=True,
                           timeout=60)
        if ok:
            assert r.returncode == 0, f"strata {' '.join(args)}:\n{r.stdout}\n{r.stderr}"
        return r.stdout + r.stderr
    strata("topic", "create", topic, "--partitions", "2", "--bootstrap-server",
           b.sasl_bootstrap, "--command-config", str(props))
    assert topic in strata("topic", "list", "--bootstrap-server", b.sasl_bootstrap,
                           "--command-config", str(props))
    # A bare host:port is reached over https once a token is configured.
    out = strata("cluster", "health", "--bootstrap-server", b.sasl_bootstrap, "--admin",
                 b.admin_url.split("://")[1], "--command-config", str(props), ok=False)
    assert "401" not in out and "cannot reach" not in out and "HEALTHY" in out, out
    out = strata("cluster", "health", "--bootstrap-server", b.sasl_bootstrap, "--admin",
                 b.admin_url.replace("https", "http"), "--command-config", str(props), ok=False)
    # The token is not sent over http: the call is refused before any connection.
    assert "not answering" in out and "http://" in out, out
    bad = tmp_path / "bad.properties"
    bad.write_text(props.read_text().replace("ops-secret", "wrong"))
    out = strata("topic", "list", "--bootstrap-server", b.sasl_bootstrap, "--command-config",
                 str(bad), ok=False)
    assert "Authentication failed" in out or "Invalid username or password" in out, out


def test_passwords_are_never_described(secure_broker):
    """DescribeConfigs answers password configs as sensitive, without their values (Kafka's)."""
    from confluent_kafka.admin import ConfigResource
    b = secure_broker
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    a = kit.admin(b.bootstrap)  # kept alive until the answer
    configs = a.describe_configs([resource])[resource].result(timeout=30)
    entry = configs["strata.etcd.password"]
    assert entry.is_sensitive and entry.value is None, entry
    assert configs["ssl.keystore.password"].is_sensitive
    assert "never-shown-etcd-secret" not in repr({k: v.value for k, v in configs.items()})
    assert configs["ssl.keystore.location"].value  # other settings are shown
