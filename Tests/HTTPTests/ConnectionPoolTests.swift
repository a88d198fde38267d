@testable import HTTP
import Testing

@Suite struct ConnectionPoolTests {
    @Test func theNewestIdleConnectionIsTakenFirst() {
        var pool = ConnectionPool<String, String>(maxIdlePerKey: 4)
        let parked = [pool.park("a", id: 1, "one"), pool.park("a", id: 2, "two"), pool.park("b", id: 3, "three")]
        #expect(parked == [true, true, true])
        let taken = [pool.take("a")?.handle, pool.take("a")?.handle, pool.take("a")?.handle]
        #expect(taken == ["two", "one", nil])
        #expect(pool.count == 1)
    }

    @Test func aRefusedNewestConnectionStaysParked() {
        var pool = ConnectionPool<String, Int>(maxIdlePerKey: 4)
        _ = pool.park("a", id: 1, 10)
        _ = pool.park("a", id: 2, 20)
        let refused = pool.take("a") { $0 < 20 }
        #expect(refused == nil)
        #expect(pool.count == 2)
        let taken = pool.take("a") { $0 == 20 }?.id
        #expect(taken == 2)
    }

    @Test func aFullPoolRefusesMore() {
        var pool = ConnectionPool<String, Int>(maxIdlePerKey: 2)
        let parked = [pool.park("a", id: 1, 1), pool.park("a", id: 2, 2), pool.park("a", id: 3, 3), pool.park("b", id: 4, 4)]
        #expect(parked == [true, true, false, true])
        #expect(pool.count == 3)
    }

    @Test func removingByID() {
        var pool = ConnectionPool<String, Int>(maxIdlePerKey: 2)
        _ = pool.park("a", id: 1, 10)
        _ = pool.park("a", id: 2, 20)
        let removed = [pool.remove(id: 1), pool.remove(id: 1)]
        #expect(removed == [10, nil])
        let next = pool.take("a")?.id
        #expect(next == 2)
        _ = pool.park("b", id: 5, 50)
        let all = pool.removeAll()
        #expect(all == [50])
        #expect(pool.count == 0)
    }
}
