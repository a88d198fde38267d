import COpenSSL
import CNetworkShims
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Client TLS contexts (`SSL_CTX`), one per distinct `TLSOptions`, built once and shared by the
/// connections made with those options. Building one loads the system CA bundle and the CA file
/// (parsing every certificate in them); a connection that finds its context built skips that.
///
/// What makes two options share a context is what goes into it: the CA file's path and the
/// insecure flag (an insecure context loads no CA at all, so its CA file does not count).
///
/// A CA file that changes on disk is picked up at the next connection, without a reload: each
/// connection compares the identity of the CA file and of the system bundle
/// (`X509_get_default_cert_file`) — device, inode, size and modification time, one `stat` each —
/// with those the context was built from, and builds a new context when one differs. (The system
/// certificate directory is not loaded into a context: OpenSSL looks certificates up there as it
/// verifies.) Connections already made keep the context they were made with (OpenSSL counts its
/// references).
enum TLSContextCache {
    /// A CA bundle's identity on disk; nil when there is no such file.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int

        init?(path: String) {
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modifiedSeconds = status.st_mtim.tv_sec
            modifiedNanoseconds = status.st_mtim.tv_nsec
        }
    }

    /// What a context was built from, besides its options.
    struct Sources: Equatable {
        var systemBundle: FileIdentity?
        var caFile: FileIdentity?
    }

    /// A context and what it was built from; the cache holds one reference to the context.
    private struct Entry {
        var context: OpaquePointer
        var sources: Sources
    }

    /// The key: what goes into a context.
    private struct Key: Hashable {
        var caFile: String?
        var insecure: Bool

        init(_ options: TLSOptions) {
            insecure = options.insecure
            caFile = options.insecure ? nil : options.caFile
        }
    }

    private static let entries = Mutex<[Key: Entry]>([:])

    /// A new TLS session (`SSL`) on the context for `options`, built first when there is none
    /// yet or its CA files changed. Throws when the context cannot be built (a CA file missing
    /// or unreadable: the next connection tries again).
    static func session(for options: TLSOptions) throws(NetworkError) -> OpaquePointer {
        let key = Key(options)
        let sources = key.insecure
            ? Sources()
            : Sources(systemBundle: FileIdentity(path: systemBundlePath),
                      caFile: key.caFile.flatMap(FileIdentity.init(path:)))
        let made: Result<OpaquePointer, NetworkError> = entries.withLock { entries in
            let context: OpaquePointer
            if let entry = entries[key], entry.sources == sources {
                context = entry.context
            } else {
                do throws(NetworkError) {
                    context = try makeContext(key)
                } catch {
                    return .failure(error)
                }
                if let replaced = entries.updateValue(Entry(context: context, sources: sources), forKey: key) {
                    SSL_CTX_free(replaced.context)
                }
            }
            // SSL_new takes its own reference to the context.
            guard let ssl = SSL_new(context) else {
                return .failure(.tlsFailed("cannot create a TLS session: \(TLSSession.drainErrors())"))
            }
            return .success(ssl)
        }
        return try made.get()
    }

    /// The system CA bundle OpenSSL loads: `$SSL_CERT_FILE`, else its built-in path.
    private static var systemBundlePath: String {
        if let path = getenv(String(cString: X509_get_default_cert_file_env())) { return String(cString: path) }
        return String(cString: X509_get_default_cert_file())
    }

    /// A client context for `key`: TLS 1.2 at least, and verification against the system store
    /// plus the CA file unless insecure.
    private static func makeContext(_ key: Key) throws(NetworkError) -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .tlsFailed("cannot create a TLS context: \(TLSSession.drainErrors())")
        }
        do throws(NetworkError) {
            guard net_ssl_ctx_set_min_tls12(context) == 1 else {
                throw .tlsFailed("cannot require TLS 1.2: \(TLSSession.drainErrors())")
            }
            net_ssl_ctx_set_modes(context)
            if key.insecure {
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            } else {
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
                guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                    throw .tlsFailed("cannot load the system CA store: \(TLSSession.drainErrors())")
                }
                if let caFile = key.caFile {
                    guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                        throw .tlsFailed("cannot load the CA file \(caFile): \(TLSSession.drainErrors())")
                    }
                }
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return context
    }
}
