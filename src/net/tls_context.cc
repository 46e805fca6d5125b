#include "net/tls_context.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace strata::net {

namespace {

// OpenSSL's reason for the last failure (and clears its error queue).
std::string OpenSslReason() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown error" : out;
}

Error Invalid(const std::string& what) {
  return MakeError(Errc::kInvalidArgument, what + ": " + OpenSslReason());
}

Result<std::string> ReadFile(const std::string& setting, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return MakeError(Errc::kInvalidArgument, fmt::format("{}: cannot read {}", setting, path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Frees OpenSSL objects on every path out.
struct Pkcs12Contents {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;
  ~Pkcs12Contents() {
    EVP_PKEY_free(key);
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
  }
};

Status ParsePkcs12(const std::string& setting, const std::string& der, const std::string& password,
                   Pkcs12Contents* out) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  PKCS12* p12 = d2i_PKCS12(nullptr, &p, static_cast<long>(der.size()));
  if (p12 == nullptr) return Invalid(setting + ": not a PKCS12 file");
  const bool ok = PKCS12_parse(p12, password.c_str(), &out->key, &out->cert, &out->chain) == 1;
  PKCS12_free(p12);
  if (!ok) return Invalid(setting + ": cannot open the PKCS12 file (wrong password?)");
  return Status::Ok();
}

// Passes ssl.key.password to OpenSSL when it decrypts a PEM key.
int KeyPassword(char* buf, int size, int /*rwflag*/, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  const int n = std::min<int>(size, static_cast<int>(password->size()));
  std::copy_n(password->data(), n, buf);
  return n;
}

Status LoadKeystore(SSL_CTX* ctx, const TlsSettings& s) {
  if (s.keystore_type == "PKCS12") {
    STRATA_ASSIGN_OR_RETURN(std::string der,
                            ReadFile("ssl.keystore.location", s.keystore_location));
    Pkcs12Contents contents;
    STRATA_RETURN_IF_ERROR(
        ParsePkcs12("ssl.keystore.location", der, s.keystore_password, &contents));
    if (contents.key == nullptr || contents.cert == nullptr) {
      return MakeError(Errc::kInvalidArgument, "ssl.keystore.location: no key and certificate");
    }
    if (SSL_CTX_use_certificate(ctx, contents.cert) != 1 ||
        SSL_CTX_use_PrivateKey(ctx, contents.key) != 1) {
      return Invalid("ssl.keystore.location");
    }
    for (int i = 0; contents.chain != nullptr && i < sk_X509_num(contents.chain); ++i) {
      X509* c = sk_X509_value(contents.chain, i);
      X509_up_ref(c);
      if (SSL_CTX_add1_chain_cert(ctx, c) != 1) {
        X509_free(c);
        return Invalid("ssl.keystore.location: chain");
      }
      X509_free(c);
    }
    return Status::Ok();
  }
  if (s.keystore_type != "PEM") {
    return MakeError(
        Errc::kInvalidArgument,
        fmt::format("ssl.keystore.type {} is not supported: use PEM or PKCS12", s.keystore_type));
  }
  std::string pem_key = s.keystore_key, pem_chain = s.keystore_certificate_chain;
  if (!s.keystore_location.empty()) {
    STRATA_ASSIGN_OR_RETURN(std::string pem,
                            ReadFile("ssl.keystore.location", s.keystore_location));
    pem_key = pem_chain = pem;  // one file holds both, as Kafka's PEM keystore
  }
  if (pem_key.empty()) {
    return MakeError(Errc::kInvalidArgument,
                     "an SSL listener needs ssl.keystore.location (or ssl.keystore.key and "
                     "ssl.keystore.certificate.chain)");
  }
  // The chain: the first certificate is the broker's, the rest its issuers.
  BIO* bio = BIO_new_mem_buf(pem_chain.data(), static_cast<int>(pem_chain.size()));
  X509* leaf = PEM_read_bio_X509_AUX(bio, nullptr, nullptr, nullptr);
  bool ok = leaf != nullptr && SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  while (ok) {
    X509* issuer = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    if (issuer == nullptr) break;
    ok = SSL_CTX_add0_chain_cert(ctx, issuer) == 1;
    if (!ok) X509_free(issuer);
  }
  BIO_free(bio);
  if (!ok) return Invalid("ssl.keystore: the certificate chain");
  ERR_clear_error();  // the end of the chain reads as an error
  bio = BIO_new_mem_buf(pem_key.data(), static_cast<int>(pem_key.size()));
  std::string password = s.key_password;
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, KeyPassword, &password);
  BIO_free(bio);
  if (key == nullptr) return Invalid("ssl.keystore: the private key (ssl.key.password?)");
  // OpenSSL checks the key against the certificate here already.
  ok = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!ok) return Invalid("ssl.keystore: the private key does not match the certificate");
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Invalid("ssl.keystore: the private key does not match the certificate");
  }
  return Status::Ok();
}

Status LoadTruststore(SSL_CTX* ctx, const TlsSettings& s) {
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  if (s.truststore_type == "PKCS12") {
    STRATA_ASSIGN_OR_RETURN(std::string der,
                            ReadFile("ssl.truststore.location", s.truststore_location));
    Pkcs12Contents contents;
    STRATA_RETURN_IF_ERROR(
        ParsePkcs12("ssl.truststore.location", der, s.truststore_password, &contents));
    if (contents.cert != nullptr) X509_STORE_add_cert(store, contents.cert);
    for (int i = 0; contents.chain != nullptr && i < sk_X509_num(contents.chain); ++i) {
      X509_STORE_add_cert(store, sk_X509_value(contents.chain, i));
    }
    return Status::Ok();
  }
  if (s.truststore_type != "PEM") {
    return MakeError(Errc::kInvalidArgument,
                     fmt::format("ssl.truststore.type {} is not supported: use PEM or PKCS12",
                                 s.truststore_type));
  }
  std::string pem = s.truststore_certificates;
  if (!s.truststore_location.empty()) {
    STRATA_ASSIGN_OR_RETURN(pem, ReadFile("ssl.truststore.location", s.truststore_location));
  }
  if (pem.empty()) return Status::Ok();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int added = 0;
  while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    added += X509_STORE_add_cert(store, ca) == 1 ? 1 : 0;
    X509_free(ca);
  }
  BIO_free(bio);
  if (added == 0) return Invalid("ssl.truststore: no certificate in it");
  ERR_clear_error();  // the end of the file reads as an error
  return Status::Ok();
}

Status SetProtocols(SSL_CTX* ctx, const TlsSettings& s) {
  int lowest = 0, highest = 0;
  for (const std::string& p : s.enabled_protocols) {
    int v = p == "TLSv1.2" ? TLS1_2_VERSION : p == "TLSv1.3" ? TLS1_3_VERSION : 0;
    if (v == 0) {
      return MakeError(
          Errc::kInvalidArgument,
          fmt::format("ssl.enabled.protocols: {} is not supported (TLSv1.2, TLSv1.3)", p));
    }
    lowest = lowest == 0 ? v : std::min(lowest, v);
    highest = std::max(highest, v);
  }
  if (lowest == 0) return MakeError(Errc::kInvalidArgument, "ssl.enabled.protocols is empty");
  SSL_CTX_set_min_proto_version(ctx, lowest);
  SSL_CTX_set_max_proto_version(ctx, highest);
  if (s.cipher_suites.empty()) return Status::Ok();
  std::string tls12, tls13;
  for (const std::string& name : s.cipher_suites) {
    if (name.starts_with("TLS_AES_") || name.starts_with("TLS_CHACHA20_")) {
      tls13 += (tls13.empty() ? "" : ":") + name;
      continue;
    }
    const char* openssl_name = OPENSSL_cipher_name(name.c_str());
    if (openssl_name == nullptr || std::string(openssl_name) == "(NONE)") {
      return MakeError(Errc::kInvalidArgument,
                       fmt::format("ssl.cipher.suites: unknown cipher suite {}", name));
    }
    tls12 += (tls12.empty() ? "" : ":") + std::string(openssl_name);
  }
  if (!tls12.empty() && SSL_CTX_set_cipher_list(ctx, tls12.c_str()) != 1) {
    return Invalid("ssl.cipher.suites");
  }
  if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1) {
    return Invalid("ssl.cipher.suites");
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<asio::ssl::context>> MakeClientTlsContext(const TlsSettings& s) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION);
  STRATA_RETURN_IF_ERROR(SetProtocols(native, s));
  const bool has_keystore = !s.keystore_location.empty() || !s.keystore_key.empty();
  if (has_keystore) STRATA_RETURN_IF_ERROR(LoadKeystore(native, s));
  const bool has_truststore = !s.truststore_location.empty() || !s.truststore_certificates.empty();
  if (has_truststore) {
    STRATA_RETURN_IF_ERROR(LoadTruststore(native, s));
  } else if (SSL_CTX_set_default_verify_paths(native) != 1) {
    return Invalid("the system's CA certificates");
  }
  return ctx;
}

Result<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(const TlsSettings& s) {
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  STRATA_RETURN_IF_ERROR(SetProtocols(native, s));
  STRATA_RETURN_IF_ERROR(LoadKeystore(native, s));
  STRATA_RETURN_IF_ERROR(LoadTruststore(native, s));
  if (s.client_auth == "required") {
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  } else if (s.client_auth == "requested") {
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
  } else if (s.client_auth != "none") {
    return MakeError(
        Errc::kInvalidArgument,
        fmt::format("ssl.client.auth: {} (none, requested or required)", s.client_auth));
  }
  return ctx;
}

namespace {

// The subject in RFC 2253 form (Kafka prints X500Principal names so).
std::string SubjectName(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

// The certificate's subject alternative names, each as "DNS:host",
// "IP Address:1.2.3.4" and so on (OpenSSL's own rendering).
std::set<std::string> SubjectAltNames(X509* cert) {
  std::set<std::string> names;
  auto* general =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (general == nullptr) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(general); ++i) {
    BIO* bio = BIO_new(BIO_s_mem());
    GENERAL_NAME_print(bio, sk_GENERAL_NAME_value(general, i));
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    names.emplace(data, static_cast<size_t>(n));
    BIO_free(bio);
  }
  GENERAL_NAMES_free(general);
  return names;
}

std::string Joined(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<std::string> CertificateIdentityChange(const asio::ssl::context& before,
                                                     const asio::ssl::context& after) {
  X509* old_cert =
      SSL_CTX_get0_certificate(const_cast<asio::ssl::context&>(before).native_handle());
  X509* new_cert = SSL_CTX_get0_certificate(const_cast<asio::ssl::context&>(after).native_handle());
  if (old_cert == nullptr || new_cert == nullptr) return std::nullopt;
  if (X509_NAME_cmp(X509_get_subject_name(old_cert), X509_get_subject_name(new_cert)) != 0) {
    return fmt::format("Keystore DistinguishedName does not match: existing={{{}}}, new={{{}}}",
                       SubjectName(old_cert), SubjectName(new_cert));
  }
  // As Kafka's SslFactory: the new certificate may add names, not drop any.
  const std::set<std::string> old_names = SubjectAltNames(old_cert);
  const std::set<std::string> new_names = SubjectAltNames(new_cert);
  if (!std::includes(new_names.begin(), new_names.end(), old_names.begin(), old_names.end())) {
    return fmt::format(
        "Keystore SubjectAltNames do not match: existing={{SAN=[{}]}}, new={{SAN=[{}]}}",
        Joined(old_names), Joined(new_names));
  }
  return std::nullopt;
}

}  // namespace strata::net
