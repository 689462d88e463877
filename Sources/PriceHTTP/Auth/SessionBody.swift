import PriceJSON

/// Supabase Auth's user and session JSON, the shapes the SDKs parse after sign-in and refresh.
struct UserRecord: Sendable, Equatable {
    var id: String
    /// JSON texts as PostgreSQL's to_json renders them.
    var createdAt: String
    var updatedAt: String
    var userMetadata: String

    var json: String {
        "{\"id\":\(JSONString.quoted(id)),\"aud\":\"authenticated\",\"role\":\"authenticated\","
            + "\"email\":\"\",\"phone\":\"\",\"app_metadata\":{\"provider\":\"anonymous\",\"providers\":[]},"
            + "\"user_metadata\":\(userMetadata),\"identities\":[],\"created_at\":\(createdAt),"
            + "\"updated_at\":\(updatedAt),\"is_anonymous\":true}"
    }
}

struct SessionBody: Sendable {
    var accessToken: String
    var expiresIn: Int
    var expiresAt: Int
    var refreshToken: String
    var user: UserRecord

    var json: String {
        "{\"access_token\":\(JSONString.quoted(accessToken)),\"token_type\":\"bearer\","
            + "\"expires_in\":\(expiresIn),\"expires_at\":\(expiresAt),"
            + "\"refresh_token\":\(JSONString.quoted(refreshToken)),\"user\":\(user.json)}"
    }
}
