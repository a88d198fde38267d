import FuzzSupport
@testable import InteractiveDaemon
import JSONValue

/// Parses the input as a backend payload and normalises it as an overlay, then derives what the
/// daemon derives from one (targeting, the template URL).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOverlay(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let payload = try? JSONValue.parse(UnsafeBufferPointer(start: data, count: size)),
          let overlay = IncomingOverlay(payload: payload) else { return 0 }
    fuzzCheck(overlay.durationSec >= 0, "a negative duration")
    fuzzCheck(overlay.location.map { (0...8).contains($0) } ?? true, "a location outside 0...8")
    fuzzCheck(overlay.emitTimestamp.map { $0 >= 0 } ?? true, "a negative emit timestamp")
    _ = overlay.isTargeted(os: "linux")
    for loggedIn in [false, true] {
        _ = overlay.templateURL(loggedIn: loggedIn, tenant: "onlivev2", fanclub: false)
    }
    return 0
}
