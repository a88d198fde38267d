import JSONValue

/// The part of `emit-ack`'s `clientContext` common to every stage: who is measuring and on what.
struct ClientContextBase: Sendable {
    /// The daemon's version.
    var sdkVersion: String
    let platform = "linux"
    /// The operating system's name and version (os-release).
    var os: String
    var deviceClass: String
    var viewportWidth: Int
    var viewportHeight: Int

    init(sdkVersion: String = interactivedVersion, os: String = OSRelease.systemName(),
         deviceClass: String = "settopbox", viewportWidth: Int = 1920, viewportHeight: Int = 1080) {
        self.sdkVersion = sdkVersion
        self.os = os
        self.deviceClass = deviceClass
        self.viewportWidth = viewportWidth
        self.viewportHeight = viewportHeight
    }

    /// The full `clientContext`: the common members, then the stage's own.
    func clientContext(_ stageFields: [String: JSONValue]) -> JSONValue {
        var members: [String: JSONValue] = [
            "profile": "overlay.legacyIframe",
            "transportMode": "legacyIframe",
            "sdkVersion": .string(sdkVersion),
            "platform": .string(platform),
            "os": .string(os),
            "deviceClass": .string(deviceClass),
            "viewportWidth": .number(Double(viewportWidth)),
            "viewportHeight": .number(Double(viewportHeight)),
        ]
        members.merge(stageFields) { _, stage in stage }
        return .object(members)
    }
}
