// The request and response types are PriceHTTPMessage's (pure, so the dialect and its tests need no
// libmicrohttpd); the server's users see them through PriceHTTP as before.
@_exported import PriceHTTPMessage
