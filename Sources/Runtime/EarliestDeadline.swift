extension Optional where Wrapped: Comparable {
    /// The earlier of two optional deadlines (the smaller value), nil only when both are nil;
    /// without the array that `[a, b].compactMap { $0 }.min()` allocates on every call.
    public func earliest(_ other: Wrapped?) -> Wrapped? {
        guard let self, let other else { return self ?? other }
        return Swift.min(self, other)
    }
}
