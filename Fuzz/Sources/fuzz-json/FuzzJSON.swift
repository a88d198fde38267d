import FuzzSupport
import JSONValue

/// Parses the input as a JSON document; what parses must serialize to text that parses back to
/// the same serialization.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let value = try? JSONValue.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    let text = value.serialized()
    let again = try? JSONValue.parse(text)
    fuzzCheck(again != nil, "the serialization of a parsed document does not parse: \(value.jsonText)")
    fuzzCheck(again?.serialized() == text, "the serialization is not stable: \(value.jsonText)")
    return 0
}
