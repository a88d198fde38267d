// Experiment for Benchmarks/README.md (run by json-encode.sh, never built by SwiftPM): the
// daemon's JSONValue serializer against a prototype with the same output, on the same
// overlay.show event line. Compiled together with a copy of Sources/JSONValue.
import Glibc

func nowNs() -> UInt64 { var ts = timespec(); clock_gettime(CLOCK_MONOTONIC, &ts); return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec) }

extension JSONValue {
    /// Prototype: same output (sorted keys), bulk copy of strings without escapes, one key sort
    /// with byte-wise comparison, no dictionary lookup per member, integer formatting without String.
    func fastWrite(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n):
            if n.rounded() == n, abs(n) < 1e15 {
                var v = Int64(n)
                if v < 0 { out.append(UInt8(ascii: "-")); v = -v }
                var digits: (UInt64, UInt64) = (0, 0)
                var count = 0
                withUnsafeMutableBytes(of: &digits) { buf in
                    repeat { buf[15 - count] = UInt8(48 + v % 10); v /= 10; count += 1 } while v > 0
                    out.append(contentsOf: buf[(16 - count)...])
                }
            } else { out.append(contentsOf: "\(n)".utf8) }
        case .string(let s): JSONValue.fastString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.fastWrite(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (offset, member) in sorted.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.fastString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.fastWrite(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func fastString(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { bytes in
            out.append(UInt8(ascii: "\""))
            if !bytes.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
                out.append(contentsOf: bytes)
            } else {
                var tmp: [UInt8] = []
                writeString(String(decoding: bytes, as: UTF8.self), to: &tmp)
                out.append(contentsOf: tmp.dropFirst().dropLast())
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}

func sample(_ number: Int) -> JSONValue {
    let timelineId = "bench-\(number)"
    let url = "http://127.0.0.1:8080/templates/quiz.html?id=\(timelineId)&logged=false&duration=15"
    let data: JSONValue = [
        "overlayId": .string("ov-a1b2c3-\(number)"), "timelineId": .string(timelineId), "kind": "minigame",
        "url": .string(url), "placement": ["location": 5, "widthPct": 36, "heightPct": 45], "durationSec": 15,
        "raw": [
            "timelineId": .string(timelineId), "typeTimeline": 1, "url": .string(url),
            "position": ["alignment": 5, "width": 36, "height": 45], "duration": 15, "targets": ["all"],
            "traceLock": false, "requireVip": false, "requireBet": false, "requireFanclub": false, "betAmount": 0,
            "sentAt": 1_764_400_000_000,
        ],
    ]
    return ["jsonrpc": "2.0", "method": "event", "params": ["bootId": "0123456789abcdef0123456789abcdef", "seq": .number(Double(number)), "type": "overlay.show", "time": "2026-11-29T14:00:00.000Z", "data": data]]
}
func twoDigits(_ value: Double) -> String { "\((value * 100).rounded() / 100)" }

let v = sample(123456)
let a = v.serialized()
var b: [UInt8] = []; v.fastWrite(to: &b)
print("same output as JSONValue.serialized():", a == b, "(\(a.count) bytes)")
for _ in 0..<5 {
    var sink = 0
    var t = nowNs()
    for _ in 0..<20000 { sink &+= v.serialized().count }
    let cur = Double(nowNs() - t) / 20000 / 1000
    t = nowNs()
    for _ in 0..<20000 { var o: [UInt8] = []; o.reserveCapacity(1024); v.fastWrite(to: &o); sink &+= o.count }
    let fast = Double(nowNs() - t) / 20000 / 1000
    print("JSONValue.serialized() \(twoDigits(cur)) µs, prototype \(twoDigits(fast)) µs, ratio \(twoDigits(cur / fast))", sink == 1 ? "" : "")
}
