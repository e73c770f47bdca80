package udpmux

// On Linux SO_REUSEADDR alone lets connected sockets share the port, and
// SO_REUSEPORT would spread the hellos over them instead.
const reusePortToo = false
