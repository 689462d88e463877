import PriceJSON

/// Supabase Auth's user and session JSON, the shapes the SDKs parse after sign-in and refresh.
struct UserRecord: Sendable, Equatable {
    var id: String
    /// JSON texts as PostgreSQL's to_json renders them.
    var createdAt: String
    var updatedAt: String
    var userMetadata: String
    /// Made by an App Attest sign-up: `app_metadata` says `"provider":"app_attest","attested":true`.
    var attested = false

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("id"); writer.string(id)
        writer.key("aud"); writer.string("authenticated")
        writer.key("role"); writer.string("authenticated")
        writer.key("email"); writer.string("")
        writer.key("phone"); writer.string("")
        writer.key("app_metadata")
        writer.json(attested ? #"{"provider":"app_attest","providers":["app_attest"],"attested":true}"#
                             : #"{"provider":"anonymous","providers":[]}"#)
        writer.key("user_metadata"); writer.json(userMetadata)
        writer.key("identities"); writer.json("[]")
        writer.key("created_at"); writer.json(createdAt)
        writer.key("updated_at"); writer.json(updatedAt)
        writer.key("is_anonymous"); writer.bool(true)
        writer.endObject()
    }

    var json: String {
        var writer = JSONWriter(capacity: 384)
        write(to: &writer)
        return writer.text
    }
}

struct SessionBody: Sendable {
    var accessToken: String
    var expiresIn: Int
    var expiresAt: Int
    var refreshToken: String
    var user: UserRecord

    var json: String {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writer.key("access_token"); writer.string(accessToken)
        writer.key("token_type"); writer.string("bearer")
        writer.key("expires_in"); writer.number(expiresIn)
        writer.key("expires_at"); writer.number(expiresAt)
        writer.key("refresh_token"); writer.string(refreshToken)
        writer.key("user"); user.write(to: &writer)
        writer.endObject()
        return writer.text
    }
}
