import Testing
@testable import interactived_voice

@Suite struct ProcessArgumentsTests {
    @Test func theControlDescriptorIsRequired() {
        #expect(ProcessArguments(["--control-fd", "3"])?.controlFD == 3)
        #expect(ProcessArguments(["--control-fd=7"])?.controlFD == 7)
        #expect(ProcessArguments([]) == nil)
        #expect(ProcessArguments(["--control-fd"]) == nil)
        #expect(ProcessArguments(["--control-fd", "-1"]) == nil)
        #expect(ProcessArguments(["--control-fd", "x"]) == nil)
        #expect(ProcessArguments(["--control-fd", "3", "--verbose"]) == nil)
    }
}
