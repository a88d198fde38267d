extension Duration {
    /// Whole milliseconds (saturating).
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return Int(whole) &+ Int(attoseconds / 1_000_000_000_000_000)
    }
}
