import CGStreamer
import CGStreamerShims

/// Reads and writes GObject properties and emits signals without the variadic C calls Swift
/// cannot import (`g_object_set`, `g_signal_emit_by_name`): GValues typed from the property's or
/// the signal's own declaration, `g_object_set_property` and `g_signal_emitv`.
enum GObjectAccess {
    /// A value for a property or a signal argument; converted to the declared type.
    enum Value {
        case bool(Bool)
        case uint(UInt32)
        case uint64(UInt64)
        case string(String?)
        /// A boxed value (GstCaps, GstStructure, GstPromise, a session description); copied or
        /// referenced by the GValue, so the caller keeps its own reference.
        case boxed(UnsafeMutableRawPointer?)
    }

    /// Sets property `name`; false when the object has none of that name or the value does not fit.
    @discardableResult
    static func set(_ object: UnsafeMutableRawPointer, _ name: String, _ value: Value) -> Bool {
        guard let spec = propertySpec(object, name) else { return false }
        var gvalue = GValue()
        g_value_init(&gvalue, spec.pointee.value_type)
        defer { g_value_unset(&gvalue) }
        guard store(value, in: &gvalue) else { return false }
        g_object_set_property(object.assumingMemoryBound(to: GObject.self), name, &gvalue)
        return true
    }

    /// Sets an enum (or any) property from its text form, e.g. `bundle-policy` to `max-bundle`
    /// (`gst_util_set_object_arg`, which reads enum nicks).
    @discardableResult
    static func set(_ object: UnsafeMutableRawPointer, _ name: String, nick: String) -> Bool {
        guard propertySpec(object, name) != nil else { return false }
        gst_util_set_object_arg(object.assumingMemoryBound(to: GObject.self), name, nick)
        return true
    }

    /// The nick of enum property `name` (`ice-connection-state` → `connected`).
    static func enumNick(_ object: UnsafeMutableRawPointer, _ name: String) -> String? {
        guard let spec = propertySpec(object, name), cgst_type_is_enum(spec.pointee.value_type) != 0 else { return nil }
        var gvalue = GValue()
        g_value_init(&gvalue, spec.pointee.value_type)
        defer { g_value_unset(&gvalue) }
        g_object_get_property(object.assumingMemoryBound(to: GObject.self), name, &gvalue)
        guard let enumClass = g_type_class_ref(spec.pointee.value_type) else { return nil }
        defer { g_type_class_unref(enumClass) }
        guard let entry = g_enum_get_value(enumClass.assumingMemoryBound(to: GEnumClass.self), g_value_get_enum(&gvalue)),
              let nick = entry.pointee.value_nick else { return nil }
        return String(cString: nick)
    }

    /// Object property `name`, with a new reference the caller releases (`g_object_unref`).
    static func object(_ object: UnsafeMutableRawPointer, _ name: String) -> UnsafeMutableRawPointer? {
        guard let spec = propertySpec(object, name) else { return nil }
        var gvalue = GValue()
        g_value_init(&gvalue, spec.pointee.value_type)
        defer { g_value_unset(&gvalue) }
        g_object_get_property(object.assumingMemoryBound(to: GObject.self), name, &gvalue)
        return g_value_dup_object(&gvalue)
    }

    /// Emits action signal `name` on `instance` with `arguments` (typed from the signal's
    /// declaration); returns nothing (the signals the media process emits return void).
    /// False when the signal does not exist or takes other arguments.
    @discardableResult
    static func emit(_ instance: UnsafeMutableRawPointer, _ name: String, _ arguments: [Value]) -> Bool {
        let instanceType = cgst_object_type(instance)
        let signal = g_signal_lookup(name, instanceType)
        guard signal != 0 else { return false }
        var query = GSignalQuery()
        g_signal_query(signal, &query)
        guard Int(query.n_params) == arguments.count else { return false }
        var values = [GValue](repeating: GValue(), count: arguments.count + 1)
        return values.withUnsafeMutableBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            defer { for index in 0..<buffer.count where base[index].g_type != 0 { g_value_unset(base + index) } }
            g_value_init(base, instanceType)
            g_value_set_object(base, instance)
            for (index, argument) in arguments.enumerated() {
                // The declared type without G_SIGNAL_TYPE_STATIC_SCOPE (bit 0).
                guard let declared = query.param_types?[index] else { return false }
                g_value_init(base + index + 1, declared & ~GType(1))
                guard store(argument, in: base + index + 1) else { return false }
            }
            g_signal_emitv(base, signal, 0, nil)
            return true
        }
    }

    private static func propertySpec(_ object: UnsafeMutableRawPointer, _ name: String) -> UnsafeMutablePointer<GParamSpec>? {
        let instance = object.assumingMemoryBound(to: GTypeInstance.self)
        guard let objectClass = instance.pointee.g_class else { return nil }
        return g_object_class_find_property(UnsafeMutableRawPointer(objectClass).assumingMemoryBound(to: GObjectClass.self), name)
    }

    /// Stores `value` in `gvalue` (initialized to its declared type); false when the kinds differ.
    private static func store(_ value: Value, in gvalue: UnsafeMutablePointer<GValue>) -> Bool {
        let type = gvalue.pointee.g_type
        switch value {
        case .bool(let flag):
            guard type == cgst_type_boolean() else { return false }
            g_value_set_boolean(gvalue, flag ? 1 : 0)
        case .uint(let number):
            guard type == cgst_type_uint() else { return false }
            g_value_set_uint(gvalue, number)
        case .uint64(let number):
            guard type == cgst_type_uint64() else { return false }
            g_value_set_uint64(gvalue, guint64(number))
        case .string(let text):
            guard type == cgst_type_string() else { return false }
            g_value_set_string(gvalue, text)
        case .boxed(let pointer):
            guard g_type_fundamental(type) == g_type_fundamental(cgst_type_caps()) else { return false }
            g_value_set_boxed(gvalue, pointer)
        }
        return true
    }
}
