#pragma once
// For tests only: a certificate authority and the leaf certificates it
// issues, made in-process with OpenSSL (no openssl CLI, no files from
// elsewhere), as PEM strings; and a temporary directory to write keystores
// and truststores into. Header-only, so that no library compiles it.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <asio/ssl/context.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace strata::net::test_certificates {

namespace internal {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct ExtensionFree {
  void operator()(X509_EXTENSION* e) const { X509_EXTENSION_free(e); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, ExtensionFree>;

[[noreturn]] inline void Fail(const std::string& what) {
  ERR_clear_error();
  throw std::runtime_error("test certificates: " + what);
}

inline PkeyPtr NewKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (key == nullptr) Fail("EC P-256 key generation");
  return key;
}

// A subject of O=Strata Tests and the given common name.
inline void SetSubject(X509* cert, const std::string& cn) {
  X509_NAME* name = X509_get_subject_name(cert);
  auto add = [&](const char* field, const std::string& value) {
    if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.data()),
                                   static_cast<int>(value.size()), -1, 0) != 1) {
      Fail(std::string("subject ") + field);
    }
  };
  add("O", "Strata Tests");
  add("CN", cn);
}

// Adds the extension `nid` with OpenSSL's config syntax ("critical,CA:TRUE").
inline void AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) Fail("extension " + value);
}

// A certificate valid from an hour ago for a day (before signing).
inline X509Ptr NewCertificate(long serial, EVP_PKEY* key, const std::string& cn) {
  X509Ptr cert(X509_new());
  if (cert == nullptr) Fail("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  SetSubject(cert.get(), cn);
  if (X509_set_pubkey(cert.get(), key) != 1) Fail("X509_set_pubkey");
  return cert;
}

inline std::string CertificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(bio.get(), cert) != 1) Fail("PEM_write_bio_X509");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

inline std::string KeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    Fail("PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

}  // namespace internal

// A leaf's private key (unencrypted PKCS#8) and certificate, PEM.
struct KeyAndCertificate {
  std::string key;
  std::string certificate;
};

// A self-signed CA (EC P-256) that issues leaf certificates.
class TestCa {
 public:
  explicit TestCa(const std::string& cn = "Strata Test CA") : key_(internal::NewKey()) {
    cert_ = internal::NewCertificate(1, key_.get(), cn);
    X509_set_issuer_name(cert_.get(), X509_get_subject_name(cert_.get()));
    internal::AddExtension(cert_.get(), cert_.get(), NID_basic_constraints, "critical,CA:TRUE");
    internal::AddExtension(cert_.get(), cert_.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    internal::AddExtension(cert_.get(), cert_.get(), NID_subject_key_identifier, "hash");
    if (X509_sign(cert_.get(), key_.get(), EVP_sha256()) <= 0) internal::Fail("signing the CA");
    pem_ = internal::CertificatePem(cert_.get());
  }

  // The CA's certificate, PEM (a truststore).
  const std::string& certificate() const { return pem_; }

  // A new key and a certificate for it with subject O=Strata Tests,CN=`cn`
  // and the subject alternative names `sans` in OpenSSL's syntax
  // ("DNS:localhost,IP:127.0.0.1"; empty: no such extension). Each has
  // its own serial number.
  KeyAndCertificate Issue(const std::string& cn, const std::string& sans) {
    internal::PkeyPtr key = internal::NewKey();
    internal::X509Ptr cert = internal::NewCertificate(++serial_, key.get(), cn);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(cert_.get()));
    internal::AddExtension(cert.get(), cert_.get(), NID_basic_constraints, "CA:FALSE");
    internal::AddExtension(cert.get(), cert_.get(), NID_key_usage,
                           "critical,digitalSignature,keyEncipherment");
    internal::AddExtension(cert.get(), cert_.get(), NID_ext_key_usage, "serverAuth,clientAuth");
    internal::AddExtension(cert.get(), cert_.get(), NID_authority_key_identifier, "keyid");
    if (!sans.empty()) internal::AddExtension(cert.get(), cert_.get(), NID_subject_alt_name, sans);
    if (X509_sign(cert.get(), key_.get(), EVP_sha256()) <= 0) internal::Fail("signing a leaf");
    return {internal::KeyPem(key.get()), internal::CertificatePem(cert.get())};
  }

  // Kafka's PEM keystore: the leaf's key, then its chain (leaf, this CA).
  std::string Keystore(const KeyAndCertificate& leaf) const {
    return leaf.key + leaf.certificate + pem_;
  }

 private:
  internal::PkeyPtr key_;
  internal::X509Ptr cert_;
  std::string pem_;
  long serial_ = 1;
};

// The certificate `context` presents (server, or client with a keystore),
// PEM; empty when it has none.
inline std::string ServedCertificate(asio::ssl::context& context) {
  X509* cert = SSL_CTX_get0_certificate(context.native_handle());
  return cert == nullptr ? std::string() : internal::CertificatePem(cert);
}

// A fresh directory under the system's temporary directory, removed with
// everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            ("strata-certs-" + std::to_string(::getpid()) + "-" + std::to_string(ticks) + "-" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Writes (or rewrites in place) `name` with `content`; its full path.
  std::string Write(const std::string& name, const std::string& content) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

}  // namespace strata::net::test_certificates
