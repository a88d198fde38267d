import CInteractiveShims
import JSONValue
import Runtime
import VoiceMediaProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One media process (`interactived-voice --control-fd 3`) and the daemon's end of its socket
/// pair (VOICE-MEDIA-PROTOCOL, docs/voice.md): JSON lines both ways, read and written on the
/// event loop without a task. What it says is reported to the voice core by its number, and
/// its end once it was reaped, after every line it wrote before it ended (a `unavailable` is
/// read before the exit that follows it). Its standard error is the daemon's (its lines carry
/// no secret); standard input is /dev/null.
@LoopActor
final class VoiceMediaProcess {
    /// How long a stopped process may linger before SIGTERM, and SIGTERM before SIGKILL.
    static let lingerLimit: Duration = .seconds(2)

    let id: VoiceMediaID
    private let child: ChildProcess
    /// The daemon's end of the socket pair; -1 once closed.
    private var control: Int32
    private var decoder = VoiceMediaLineDecoder()
    /// Bytes the socket could not take yet.
    private var outbox: [UInt8] = []
    /// Close the control socket once the outbox is written (after `stop`).
    private var closeWhenWritten = false
    private let report: (VoiceInput) -> Void
    private let log: Logger
    private let timers: any TimerScheduler
    private var lingerTimer: TimerID?
    /// Unknown message types and fields, logged once each.
    private var loggedOnce: Set<String> = []

    private init(id: VoiceMediaID, child: ChildProcess, control: Int32, report: @escaping (VoiceInput) -> Void, log: Logger,
                 timers: any TimerScheduler) {
        self.id = id
        self.child = child
        self.control = control
        self.report = report
        self.log = log
        self.timers = timers
    }

    /// Starts `executable` on a new socket pair. `report` takes what the process says and, last,
    /// its exit; `ended` is called after that, once nothing of the process is left.
    static func start(_ id: VoiceMediaID, executable: String, report: @escaping (VoiceInput) -> Void, log: Logger,
                      timers: any TimerScheduler, ended: @escaping (VoiceMediaID) -> Void) throws(VoiceMediaStartError) -> VoiceMediaProcess {
        var pair: [Int32] = [-1, -1]
        guard interactive_stream_socketpair(&pair) == 0 else {
            throw VoiceMediaStartError("socketpair: \(String(cString: strerror(errno)))")
        }
        let (ours, theirs) = (pair[0], pair[1])
        let child: ChildProcess
        do {
            child = try ChildProcess.spawn(executable, arguments: ["--control-fd", "3"], descriptors: [3: theirs])
        } catch {
            close(ours)
            close(theirs)
            throw VoiceMediaStartError(error.description)
        }
        close(theirs)
        let process = VoiceMediaProcess(id: id, child: child, control: ours, report: report, log: log, timers: timers)
        let flags = fcntl(ours, F_GETFL)
        do throws(VoiceMediaStartError) {
            guard flags >= 0, fcntl(ours, F_SETFL, flags | O_NONBLOCK) == 0 else {
                throw VoiceMediaStartError("fcntl(O_NONBLOCK): \(String(cString: strerror(errno)))")
            }
            do {
                try EventLoop.shared.register(ours) { [weak process] events in process?.ready(events) }
            } catch {
                throw VoiceMediaStartError(error.description)
            }
        } catch {
            close(ours)
            process.control = -1
            child.signal(SIGKILL)
            throw error
        }
        child.onExit { [weak process] termination in
            process?.exited(termination)
            ended(id)
        }
        log.debug("Voice media process \(id.value) started (pid \(child.pid))", ["INTERACTIVE_VOICE_MEDIA_PID": String(child.pid)])
        return process
    }

    /// Writes one message (in order; what the socket cannot take now goes when it can).
    func send(_ message: DaemonMessage) {
        guard control >= 0, !closeWhenWritten else { return }
        outbox += VoiceMediaLine.encode(message.json)
        flush()
    }

    /// Sends `stop` and closes the control socket; a process still running after
    /// `lingerLimit` gets SIGTERM, and SIGKILL after as long again.
    func stop() {
        send(.stop)
        closeWhenWritten = true
        if outbox.isEmpty { closeControl() }
        guard lingerTimer == nil, child.isRunning else { return }
        lingerTimer = timers.schedule(at: timers.now + Self.lingerLimit) { [weak self] in self?.linger(next: SIGTERM) }
    }

    /// Waits until the process was reaped; nil when the calling task is cancelled first.
    func exited() async -> ChildProcess.Termination? { await child.exited() }

    /// Ends it at once (the daemon stops and it did not end in time).
    func kill() { child.signal(SIGKILL) }

    private func linger(next signal: Int32) {
        lingerTimer = nil
        guard child.isRunning else { return }
        log.warning("The voice media process \(id.value) did not end within \(BackendOutage.seconds(Self.lingerLimit)) of stop: "
                    + (signal == SIGTERM ? "terminating it" : "killing it"))
        child.signal(signal)
        if signal == SIGTERM {
            lingerTimer = timers.schedule(at: timers.now + Self.lingerLimit) { [weak self] in self?.linger(next: SIGKILL) }
        }
    }

    // MARK: The control socket

    private func ready(_ events: IOEvents) {
        if !events.isDisjoint(with: [.readable, .hangup, .error]) { readAvailable() }
        if events.contains(.writable) { flush() }
    }

    /// Reads and reports every complete line the socket holds; closes it at its end or at a line
    /// that breaks the protocol (the process ends when it sees the close).
    private func readAvailable() {
        while control >= 0 {
            // Copied out of the loop's buffer before anything is reported: a report may lead to
            // code that reads another socket into it.
            let (bytes, count, error) = EventLoop.shared.withReadBuffer { buffer -> ([UInt8], Int, Int32) in
                let count = recv(control, buffer.baseAddress, buffer.count, 0)
                let error = errno
                return (count > 0 ? Array(buffer[0..<count]) : [], count, error)
            }
            if count > 0 { decode(bytes) }
            if count > 0 || (count < 0 && error == EINTR) { continue }
            if count < 0, error == EAGAIN || error == EWOULDBLOCK { return }
            closeControl()
        }
    }

    private func decode(_ bytes: [UInt8]) {
        let values: [JSONValue]
        do {
            values = try decoder.append(bytes)
        } catch {
            log.warning("The voice media process \(id.value) broke the protocol (\(error)); closing its control socket")
            closeControl()
            return
        }
        for value in values {
            do {
                switch try MediaMessage.received(from: value) {
                case .message(let message, let ignored):
                    for field in ignored where loggedOnce.insert("field \(field)").inserted {
                        log.debug("Voice media process: ignoring an unknown field \(PeerText.clipped(field, limit: 64))")
                    }
                    report(.media(id, message))
                case .unknownType(let type):
                    if loggedOnce.insert("type \(type)").inserted {
                        log.debug("Voice media process: ignoring messages of an unknown type \(PeerText.clipped(type, limit: 64))")
                    }
                }
            } catch {
                log.warning("The voice media process \(id.value) broke the protocol (\(error)); closing its control socket")
                closeControl()
                return
            }
            // A message may have stopped the process (its report is handled at once).
            guard control >= 0 else { return }
        }
    }

    private func flush() {
        while control >= 0, !outbox.isEmpty {
            let (written, error) = outbox.withUnsafeBytes { (Glibc.send(control, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)), errno) }
            if written > 0 {
                outbox.removeFirst(written)
            } else if written < 0 && error == EINTR {
                continue
            } else if written < 0 && (error == EAGAIN || error == EWOULDBLOCK) {
                return
            } else {
                // The process closed its end: its exit follows.
                outbox.removeAll()
            }
        }
        if closeWhenWritten { closeControl() }
    }

    private func closeControl() {
        guard control >= 0 else { return }
        EventLoop.shared.deregister(control)
        close(control)
        control = -1
        outbox.removeAll()
    }

    // MARK: The end

    private func exited(_ termination: ChildProcess.Termination) {
        // What it wrote before it ended is read first.
        readAvailable()
        closeControl()
        if let lingerTimer { timers.cancel(lingerTimer) }
        lingerTimer = nil
        let exit: MediaExit
        switch termination {
        case .exited(let status): exit = .exited(status: status)
        case .signalled(let signal): exit = .signalled(signal)
        }
        log.debug("Voice media process \(id.value) ended (\(termination))")
        report(.mediaExited(id, exit))
    }
}

/// Why a media process could not be started.
struct VoiceMediaStartError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
