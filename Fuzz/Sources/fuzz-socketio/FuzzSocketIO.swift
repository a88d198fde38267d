import FuzzSupport
@testable import SocketIO

/// Splits the input at NUL bytes: the first part is decoded as a Socket.IO packet, the others are
/// handed to the binary assembler as attachments. A decoded packet carrying what the protocol
/// carries (no data, an array or an object) must encode to text that decodes to the same packet;
/// a bare number after an ack id cannot be told from the id's digits, so it is not checked.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketIO(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let parts = UnsafeBufferPointer(start: data, count: size).split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
    guard let text = parts.first, let packet = try? SocketIOCodec.decode(text) else { return 0 }
    if packet.data == nil || packet.data?.arrayValue != nil || packet.data?.objectValue != nil {
        let reencoded = try? SocketIOCodec.decode(SocketIOCodec.encode(packet))
        fuzzCheck(reencoded == packet, "the packet does not survive encoding: \(SocketIOCodec.preview(text))")
    }
    var assembler = SocketIOBinaryAssembler()
    do {
        var complete = try assembler.start(packet)
        for attachment in parts.dropFirst() where complete == nil {
            complete = try assembler.add(attachment)
        }
        if let (assembled, attachments) = complete {
            fuzzCheck(assembled == packet, "assembled another packet")
            fuzzCheck(attachments.count == packet.attachmentCount, "assembled the wrong number of attachments")
        }
    } catch {
        return 0
    }
    return 0
}
