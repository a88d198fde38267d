import CInteractiveShims
import CSystemd
import JSONValue
#if canImport(Glibc)
import Glibc
#endif

/// The device id sent with tracking: stable across restarts and never the raw machine id.
enum DeviceIdentity {
    /// Application id for `sd_id128_get_machine_app_specific` (a hash of the machine id keyed by it).
    private static let applicationID = sd_id128_t(
        bytes: (0x8f, 0x2a, 0x41, 0x6c, 0x0b, 0x9e, 0x4d, 0x13, 0xa7, 0x55, 0x3c, 0xe1, 0x92, 0x07, 0x6b, 0xd4))

    /// The machine's app-specific id, else a random id kept in the store.
    static func resolve(store: Store) async throws -> String {
        var derived = sd_id128_t()
        if sd_id128_get_machine_app_specific(applicationID, &derived) == 0 {
            return hex(derived)
        }
        if let stored = try await store.setting("deviceId")?.stringValue { return stored }
        let fresh = randomHex(bytes: 16)
        try await store.setSetting("deviceId", .string(fresh))
        return fresh
    }

    private static func hex(_ id: sd_id128_t) -> String {
        withUnsafeBytes(of: id) { raw in raw.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined() }
    }

    /// Random bytes as lower-case hex (getrandom).
    static func randomHex(bytes count: Int) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes[filled...].withUnsafeMutableBytes { interactive_getrandom($0.baseAddress, $0.count) }
            if got > 0 { filled += got } else if errno != EINTR { break }
        }
        if filled < count {
            var generator = SystemRandomNumberGenerator()
            for index in filled..<count { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        return bytes.map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
    }
}
