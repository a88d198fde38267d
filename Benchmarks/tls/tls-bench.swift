// tls-bench PORT CAFILE COUNT: COUNT HTTPS GETs to https://localhost:PORT/length?n=64, each on a new
// connection (no keep-alive: a TLS handshake each), verified against the system store plus CAFILE.
// Built and run by Benchmarks/tls/compare.sh; exit status 0 when every response was the one asked for.
import Glibc
import HTTP
import SocketIO

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[1]), let count = Int(arguments[3]) else {
    print("usage: tls-bench PORT CAFILE COUNT")
    exit(2)
}
let client = HTTPClient(maxIdlePerOrigin: 0)
let tls = TLSOptions(caFile: arguments[2])
do {
    let url = try HTTPURL(parsing: "https://localhost:\(port)/length?n=64")
    for _ in 0..<count {
        let response = try await client.send(HTTPRequest(method: "GET", url: url), tls: tls, timeout: .seconds(30))
        guard response.status == 200, response.body.count == 64 else {
            print("tls-bench: unexpected response \(response.status)")
            exit(1)
        }
    }
} catch {
    print("tls-bench: \(error)")
    exit(1)
}
