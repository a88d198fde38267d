import CMalloc
import Foundation
import JSONValue

// json-bench: the memory and time of reading one REST reply as a whole tree (`JSONValue.parse`)
// and part by part (`JSONDocument`, as the daemon reads replies since issue 20). One shape per
// process, so that the peak (VmHWM, reset by /proc/self/clear_refs before the read) is that
// read's alone. See Benchmarks/README.md, "json-bench".

let usage = """
    Usage: json-bench SHAPE MODE [--runs N]
      SHAPE  scenario-4M    4 MiB VOD scenario: 15,000 ACTIVE timelines of about 270 bytes
             scenario-tiny  4 MiB of 500,000 one-member objects under "timelines"
             entries-100k   256 KiB reply: "answered" and 100,000 small entries ([0,0,…])
             objects-30k    256 KiB reply: "answered" and 30,000 one-member objects
      MODE   tree           JSONValue.parse of the whole body
             document       JSONDocument: checked once, the array's elements read one by one,
                            an element built only when it is ACTIVE (kept as bytes), ids kept
             none           nothing: the figure of the measurement itself (page faults of the
                            code that runs, /proc reads), to subtract from the others
    Freed memory is given back (malloc_trim) before each read, so that the peak is of memory the
    read itself took.
    """

func body(_ shape: String) -> [UInt8]? {
    switch shape {
    case "scenario-4M":
        let timelines = (0..<15_000).map { n in
            #"{"timelineId":"tl-\#(n)","typeTimeline":1,"showStatus":"ACTIVE","time":"\#(n)","url":"http://127.0.0.1/q.html?id=tl-\#(n)","#
                + #""position":{"alignment":4,"width":40,"height":30},"duration":30,"targets":["all"],"pad":"\#(String(repeating: "p", count: 40))"}"#
        }
        return Array(#"{"timelines":["#.utf8) + Array(timelines.joined(separator: ",").utf8) + Array("]}".utf8)
    case "scenario-tiny":
        return Array(#"{"timelines":["#.utf8) + Array(Array(repeating: #"{"a":0}"#, count: 500_000).joined(separator: ",").utf8) + Array("]}".utf8)
    case "entries-100k":
        return Array(#"{"answered":["tl1"],"x":["#.utf8) + Array(Array(repeating: "0", count: 100_000).joined(separator: ",").utf8) + Array("]}".utf8)
    case "objects-30k":
        return Array(#"{"answered":["tl1"],"x":["#.utf8) + Array(Array(repeating: #"{"a":0}"#, count: 30_000).joined(separator: ",").utf8) + Array("]}".utf8)
    default:
        return nil
    }
}

func kib(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
}

/// Reads the body as the daemon does: the list under "timelines" (else "answered"), element by
/// element; ACTIVE timelines kept as bytes, ids kept as strings.
func readByParts(_ bytes: [UInt8]) -> Int {
    guard let document = try? JSONDocument(validating: bytes) else { return -1 }
    var kept: [[UInt8]] = []
    var ids: [String] = []
    if let list = document.member("timelines", of: document.root) {
        document.forEachElement(of: list) { span in
            guard document.member("showStatus", of: span).map(document.value)?.stringValue == "ACTIVE" else { return true }
            let timeline = document.value(span)
            if timeline["timelineId"] != nil { kept.append(Array(document.bytes[span.range])) }
            return true
        }
    }
    if let list = document.member("answered", of: document.root) {
        document.forEachElement(of: list) { span in
            if let id = document.value(span).idString { ids.append(id) }
            return true
        }
    }
    return kept.count + ids.count
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, let bytes = body(arguments[0]), ["tree", "document", "none"].contains(arguments[1]) else {
    print(usage)
    exit(64)
}
let runs = arguments.count >= 4 && arguments[2] == "--runs" ? max(1, Int(arguments[3]) ?? 1) : 1
var times: [Double] = []
var peak = 0
for _ in 0..<runs {
    malloc_trim(0)
    let before = kib("VmRSS")
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let clock = ContinuousClock()
    let started = clock.now
    var result = 0
    if arguments[1] == "none" {
        result = 0
    } else if arguments[1] == "tree" {
        let value = try? JSONValue.parse(bytes)
        result = value?["timelines"]?.arrayValue?.count ?? value?["x"]?.arrayValue?.count ?? -1
    } else {
        result = readByParts(bytes)
    }
    let elapsed = started.duration(to: clock.now)
    times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    peak = max(peak, kib("VmHWM") - before)
    precondition(result >= 0, "the body did not parse")
}
let bodyKiB = Double(bytes.count) / 1024
print(String(format: "%-14@ %-9@ body %7.0f KiB  peak above the body %8.0f KiB (%5.1f × the body)  time min %7.1f ms  max %7.1f ms",
             arguments[0], arguments[1], bodyKiB, Double(peak), Double(peak) / bodyKiB, times.min() ?? 0, times.max() ?? 0))
