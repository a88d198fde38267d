import JSONValue
