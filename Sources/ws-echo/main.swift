// ws-echo URL: connects to a WebSocket server and sends every text and binary message back
// unchanged until the server closes. Exit status 0 after a close handshake, 1 on any error.
import Glibc
import SocketIO

/// Writes one line to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

func fail(_ message: String) -> Never {
    printError("ws-echo: \(message)")
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    printError("usage: ws-echo URL")
    exit(2)
}
let url = arguments[1]
var options = TLSOptions()
if let caFile = getenv("WS_ECHO_CA_FILE") { options.caFile = String(cString: caFile) }

let socket: WebSocket
do {
    socket = try await WebSocket.connect(url: url, tls: options, maxMessageBytes: 64 << 20) { level, message in
        if level >= .warning { printError("ws-echo: \(message)") }
    }
} catch {
    fail("cannot connect to \(url): \(error)")
}
var echoed = 0
while true {
    do {
        let message = try await socket.receive()
        try await socket.send(message)
        echoed += 1
    } catch SocketIOError.closedByPeer(let code, let reason) {
        print("ws-echo: echoed \(echoed) messages; closed by the server with code \(code.map(String.init) ?? "none")\(reason.isEmpty ? "" : " (\(reason))")")
        exit(0)
    } catch {
        fail("\(error)")
    }
}
