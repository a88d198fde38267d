/// Whether an overlay that arrived may be shown (BACKEND.md, Which overlays are shown), for
/// minigames and for predict/lucky buttons alike. Pure: the caller passes what it knows.
enum OverlayAdmission {
    /// nil when the overlay may be shown, else why it is kept off screen (a tracking cancel reason).
    /// - Parameters:
    ///   - arrivedIn: the room the overlay arrived in.
    ///   - current: the room the overlays serve now (nil: none); an overlay of a room that was
    ///     left meanwhile is not shown in the next one (`remove_all_view`).
    ///   - onScreen: the timelines on screen, when a timeline already showing is to be refused
    ///     (minigames); nil skips that check (a predict/lucky button is updated in place).
    static func refusal(_ overlay: IncomingOverlay, arrivedIn: RoomKey, current: RoomKey?, os: String?,
                        answered: Set<String>, onScreen: [String]?) -> String? {
        if current != arrivedIn { return "remove_all_view" }
        // Only a minigame needs an alignment (seed 000); a predict or lucky dialog without one
        // opens at the centre over the whole video area (`OnScreenOverlay.placement`).
        if (overlay.location == nil && overlay.kind == .minigame) || !overlay.hasLoadableURL { return "invalid_overlay_state" }
        if !overlay.isTargeted(os: os) { return "not_targeted" }
        if answered.contains(overlay.timelineId) { return "already_interacted" }
        if let onScreen, onScreen.contains(overlay.timelineId) { return "already_on_screen" }
        return nil
    }
}
