import Network
import Runtime
import SocketIO

/// The WebSockets to the voice server (Janus' API, subprotocol `janus-protocol`) the voice core
/// asks for, over the project's WebSocket client: each is opened and read in a child task of the
/// manager's `run()`, and what happens to it (opened, a text message, closed) is reported to the
/// core by its number. Nothing sent or received is logged: requests carry the API secret, the
/// token and the room's pin.
@LoopActor
final class VoiceSignalling {
    /// How long opening one may take (DNS, TCP, TLS and the upgrade).
    static let connectTimeout: Duration = .seconds(10)
    /// The largest message taken from the server (a participant list of `VoiceRoster.limit`
    /// entries, an SDP answer with its candidates).
    static let maxMessageBytes = 1 << 20

    private let work: ChildTasks
    private let report: (VoiceInput) -> Void
    private var open: [VoiceSocketID: WebSocket] = [:]
    /// Asked to close while still opening: closed as soon as it opens.
    private var closeWhenOpen: Set<VoiceSocketID> = []

    /// `report` takes what happens to each WebSocket; `work` runs the tasks that read them.
    init(work: ChildTasks, report: @escaping (VoiceInput) -> Void) {
        self.work = work
        self.report = report
    }

    /// Opens `socket` to `url`; `socketOpened` or `socketClosed` follows, then every message.
    func open(_ socket: VoiceSocketID, url: String, tls: TLSOptions) {
        work.start { [weak self] in await self?.run(socket, url: url, tls: tls) }
    }

    /// Sends one text message; a WebSocket that cannot take it any more reports its close.
    func send(_ socket: VoiceSocketID, _ text: String) {
        do {
            try open[socket]?.send(.text(text))
        } catch {
            // Closing began: `receive` ends with the reason and reports it.
        }
    }

    /// Starts the close handshake (what was sent before goes first); `socketClosed` follows.
    func close(_ socket: VoiceSocketID) {
        if let webSocket = open[socket] {
            webSocket.close()
        } else {
            closeWhenOpen.insert(socket)
        }
    }

    private func run(_ socket: VoiceSocketID, url: String, tls: TLSOptions) async {
        let webSocket: WebSocket
        do {
            webSocket = try await WebSocket.connect(url: url, headers: ["Sec-WebSocket-Protocol": VoiceCore.subprotocol], tls: tls,
                                                    timeout: Self.connectTimeout, maxMessageBytes: Self.maxMessageBytes)
        } catch {
            closeWhenOpen.remove(socket)
            report(.socketClosed(socket, reason: Self.reason(error)))
            return
        }
        if closeWhenOpen.remove(socket) != nil {
            webSocket.close()
        } else {
            open[socket] = webSocket
            report(.socketOpened(socket))
        }
        let reason = await receive(from: webSocket, socket)
        open[socket] = nil
        report(.socketClosed(socket, reason: reason))
    }

    /// Reports each text message until the WebSocket ends; returns why it ended. Cancelled (the
    /// daemon stops), it closes the WebSocket and still waits for the end.
    private func receive(from webSocket: WebSocket, _ socket: VoiceSocketID) async -> String {
        await withTaskCancellationHandler {
            while true {
                do {
                    if case .text(let text) = try await webSocket.receive() { report(.janusReceived(socket, text)) }
                } catch {
                    return Self.reason(error)
                }
            }
        } onCancel: {
            EventLoop.shared.execute { [weak webSocket] in webSocket?.close(code: 1001) }
        }
    }

    /// Why a WebSocket could not open or ended, for logs and `BackendUnreachable`: the host at
    /// most, never the URL's path or query (which may hold a token).
    private static func reason(_ error: any Error) -> String {
        if case .invalidURL = error as? SocketIOError { return "voiceUrl is not a WebSocket URL" }
        return String(describing: error)
    }
}
