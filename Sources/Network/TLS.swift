import COpenSSL
import CNetworkShims

/// TLS settings of a connection. Connections made with equal options share one TLS context
/// (`TLSContextCache`).
public struct TLSOptions: Sendable, Equatable {
    /// A PEM bundle of extra trusted CAs, added to the system store.
    public var caFile: String?
    /// Skip certificate and host name verification (development only; logged as a warning).
    public var insecure: Bool

    public init(caFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.insecure = insecure
    }
}

/// One client TLS session over memory BIOs: the transport moves ciphertext between the BIOs and
/// the socket, so OpenSSL never touches the file descriptor (no SIGPIPE, no blocking).
/// Owned by one `Connection` and used only on the event loop.
package final class TLSSession {
    package let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer

    /// A session on the context for `options` (`TLSContextCache`: verification against the system
    /// store plus `options.caFile` unless `options.insecure`), with SNI for DNS names and host name
    /// (or IP) verification unless `options.insecure`.
    package init(host: String, hostIsIP: Bool, options: TLSOptions) throws(NetworkError) {
        let ssl = try TLSContextCache.session(for: options)
        guard let readBIO = BIO_new(BIO_s_mem()), let writeBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .tlsFailed("cannot create memory BIOs")
        }
        SSL_set_bio(ssl, readBIO, writeBIO)
        SSL_set_connect_state(ssl)
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        if !hostIsIP, net_ssl_set_sni(ssl, host) != 1 {
            throw .tlsFailed("cannot set the server name \(host): \(TLSSession.drainErrors())")
        }
        if !options.insecure, net_ssl_set_verify_host(ssl, host, hostIsIP ? 1 : 0) != 1 {
            throw .tlsFailed("cannot set the expected host \(host): \(TLSSession.drainErrors())")
        }
    }

    deinit { SSL_free(ssl) }  // also frees both BIOs

    /// Feeds ciphertext received from the socket.
    package func feed(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        _ = BIO_write(readBIO, base, Int32(bytes.count))
    }

    /// Takes the ciphertext OpenSSL produced, to be written to the socket.
    package func takeOutput(into out: inout [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while BIO_ctrl_pending(writeBIO) > 0 {
            let n = chunk.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32($0.count)) }
            guard n > 0 else { break }
            out.append(contentsOf: chunk[0..<Int(n)])
        }
    }

    package enum Step {
        case done(Int)
        case wantRead
        case closed
    }

    /// One SSL_do_handshake step.
    package func handshake() throws(NetworkError) -> Step {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .done(0) }
        return try classify(result, during: "handshake")
    }

    /// One SSL_read into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> Step {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if result > 0 { return .done(Int(result)) }
        return try classify(result, during: "read")
    }

    /// Encrypts `bytes` into the output BIO (a memory BIO takes everything).
    package func write(_ bytes: [UInt8]) throws(NetworkError) {
        var offset = 0
        while offset < bytes.count {
            ERR_clear_error()
            let result = bytes.withUnsafeBytes { raw in
                SSL_write(ssl, raw.baseAddress.map { $0 + offset }, Int32(raw.count - offset))
            }
            guard result > 0 else {
                let error = SSL_get_error(ssl, result)
                throw .tlsFailed("write failed (\(error)): \(TLSSession.drainErrors())")
            }
            offset += Int(result)
        }
    }

    /// Queues a close_notify alert.
    package func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    private func classify(_ result: Int32, during step: String) throws(NetworkError) -> Step {
        let error = SSL_get_error(ssl, result)
        switch error {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .wantRead
        case SSL_ERROR_ZERO_RETURN:
            return .closed
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                let reason = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
                ERR_clear_error()
                throw .tlsVerificationFailed(reason)
            }
            let detail = TLSSession.drainErrors()
            throw .tlsFailed("\(step) failed (SSL error \(error))" + (detail.isEmpty ? "" : ": \(detail)"))
        }
    }

    /// The OpenSSL error queue of this thread as text, emptied.
    package static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.joined(separator: "; ")
    }
}
