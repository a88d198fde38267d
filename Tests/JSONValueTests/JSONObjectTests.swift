import JSONValue
import Testing

@Suite struct JSONObjectTests {
    @Test func aParsedObjectKeepsTheOrderOfItsTextAndARepeatedKeyAtItsFirstPlace() throws {
        let object = try #require(try JSONValue.parse(#"{"b":1,"a":2,"c":3,"a":4}"#).objectValue)
        #expect(object.keys == ["b", "a", "c"])
        #expect(object["a"] == 4)
        #expect(object.count == 3)
    }

    @Test func membersAreSetReplacedAndRemoved() {
        var object: JSONObject = ["a": 1]
        object["b"] = 2
        object["a"] = 3
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == 3)
        #expect(object.removeValue(forKey: "a") == 3)
        #expect(object.removeValue(forKey: "a") == nil)
        object["b"] = nil
        #expect(object.isEmpty)
        #expect(object["b"] == nil)
    }

    @Test func equalObjectsHaveTheSameMembersInAnyOrder() {
        let one: JSONObject = ["a": 1, "b": [true, nil]]
        let other: JSONObject = ["b": [true, nil], "a": 1]
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(one != ["a": 1])
        #expect(one != ["a": 1, "b": [true]])
        #expect(one != ["a": 1, "c": [true, nil]])
    }

    /// Above `indexedCount` members an object keeps an index: what it reads must not change as
    /// it crosses that size either way.
    @Test(arguments: [3, 16, 17, 40])
    func anObjectOfAnySizeReadsEveryMember(count: Int) {
        var object = JSONObject()
        for number in 0..<count { object["k\(number)"] = .number(Double(number)) }
        #expect(object.count == count)
        for number in 0..<count { #expect(object["k\(number)"] == .number(Double(number))) }
        #expect(object["k\(count)"] == nil)
        // Removing from the front moves every later member; each must still be found.
        object["k0"] = nil
        for number in 1..<count { #expect(object["k\(number)"] == .number(Double(number))) }
        object["k0"] = true
        #expect(object.keys.last == "k0")
        #expect(object["k0"] == true)
        #expect(object["k1"] == 1)
        #expect(object == JSONObject(uniquing: object.reversed()))
    }

    @Test func aLargeParsedObjectWithRepeatedKeysKeepsTheLastValues() throws {
        let members = (0..<100).map { "\"k\($0 % 50)\":\($0)" }.joined(separator: ",")
        let object = try #require(try JSONValue.parse("{\(members)}").objectValue)
        #expect(object.count == 50)
        #expect(object.keys.first == "k0")
        #expect(object["k0"] == 50)
        #expect(object["k49"] == 99)
    }

    @Test func aDictionaryBecomesAnObjectInTheOrderOfItsKeys() {
        let object = JSONObject(["b": 1, "a": 2, "c": 3])
        #expect(object.keys == ["a", "b", "c"])
        #expect(object.mapValues { _ in .null }.keys == ["a", "b", "c"])
        #expect(object.filter { $0.key != "b" }.keys == ["a", "c"])
        #expect(object.merging(["d": 4, "a": 5]) { _, new in new } == ["a": 5, "b": 1, "c": 3, "d": 4])
    }
}
