import PriceJSON

/// Supabase Auth's user and session JSON, the shapes the SDKs parse after sign-in and refresh.
struct UserRecord: Sendable, Equatable {
    var id: String
    /// JSON texts as PostgreSQL's to_json renders them.
    var createdAt: String
    var updatedAt: String
    var userMetadata: String
    /// The attested sign-up that made the identity (`app_attest`, `android_key_attestation`; the
    /// database's auth.attestation_of): `app_metadata` says `"provider":"<it>","attested":true`.
    var attestation: String? = nil

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("id"); writer.string(id)
        writer.key("aud"); writer.string("authenticated")
        writer.key("role"); writer.string("authenticated")
        writer.key("email"); writer.string("")
        writer.key("phone"); writer.string("")
        writer.key("app_metadata")
        if let attestation {
            writer.beginObject()
            writer.key("provider"); writer.string(attestation)
            writer.key("providers"); writer.beginArray(); writer.string(attestation); writer.endArray()
            writer.key("attested"); writer.bool(true)
            writer.endObject()
        } else {
            writer.json(#"{"provider":"anonymous","providers":[]}"#)
        }
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
