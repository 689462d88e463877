// The request and response types and the `HTTPApplication` contract are PriceHTTPMessage's (pure, so the
// dialect and the application build and test without libmicrohttpd); the server's users see them
// through PriceHTTP as before.
@_exported import PriceHTTPMessage
