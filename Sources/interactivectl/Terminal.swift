import Glibc

/// What interactivectl needs of the terminal: its width, and reading a secret without echo.
enum Terminal {
    /// The width to wrap help to: the terminal's (TIOCGWINSZ on standard output), else
    /// `$COLUMNS`, else 80; never below 40.
    static func width(environment: [String: String]) -> Int {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return max(40, Int(size.ws_col))
        }
        if let columns = environment["COLUMNS"].flatMap({ Int($0) }), columns > 0 {
            return max(40, columns)
        }
        return 80
    }

    /// Reads one line from the terminal on standard input without echoing it, after writing
    /// `prompt` to standard error. Ctrl-C cancels (nil), Ctrl-D or Enter ends the line,
    /// Backspace and Ctrl-U edit it. The terminal's settings are restored before returning.
    static func readHidden(prompt: String) -> String? {
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var quiet = saved
        // No echo, no line editing by the terminal, and Ctrl-C as a byte rather than a signal, so
        // that every way out goes through the restore below.
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        // The prompt only once echo is off: what is typed after it never shows.
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0 else { return nil }
        Output.write(prompt, to: STDERR_FILENO)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
            Output.write("\n", to: STDERR_FILENO)
        }
        var line: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return String(decoding: line, as: UTF8.self) }
            switch byte {
            case 0x03: return nil // Ctrl-C
            case 0x04, 0x0A, 0x0D: return String(decoding: line, as: UTF8.self) // Ctrl-D, Enter
            case 0x15: line.removeAll() // Ctrl-U
            case 0x08, 0x7F:
                // Backspace: drop one UTF-8 character (its continuation bytes first).
                while let last = line.popLast(), last & 0xC0 == 0x80 {}
            default: line.append(byte)
            }
        }
    }
}
