import Testing
import PriceJSON

@Suite("UUID text: the 8-4-4-4-12 hex form PostgreSQL and the SDKs share, and nothing else")
struct UUIDTextTests {
    @Test func theCanonicalFormInEitherCaseIsAUUID() {
        #expect(UUIDText.isValid("123e4567-e89b-12d3-a456-426614174000"))
        #expect(UUIDText.isValid("123E4567-E89B-12D3-A456-426614174000"))
        #expect(UUIDText.isValid("00000000-0000-0000-0000-000000000000"))
    }

    @Test func anyOtherTextIsNot() {
        for text in ["", "123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}",
                     "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000",
                     "123e4567-e89b-12d3-a456_426614174000", "123e4567-e89b-12d3-a456-42661417400g",
                     "123e456-7e89b-12d3-a456-426614174000", " 123e4567-e89b-12d3-a456-42661417400",
                     "123e4567-e89b-12d3-a456-42661417400\u{0}", "123e4567-e89b-12d3-a456-4266141740é"] {
            #expect(!UUIDText.isValid(text), "\(text.debugDescription)")
        }
    }
}
