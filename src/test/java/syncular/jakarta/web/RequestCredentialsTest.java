package syncular.jakarta.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class RequestCredentialsTest {
    @Test
    void aQueryParameterIsTheFirstPercentDecodedValueOfItsName() {
        assertEquals(Optional.of("a b/c"), RequestCredentials.first("x=1&token=a%20b%2Fc&token=second", "token"));
        assertEquals(Optional.of("é"), RequestCredentials.first("t%6Fken=%C3%A9", "token"));
        assertEquals(Optional.of(""), RequestCredentials.first("token&x=1", "token"));
        assertEquals(Optional.of(""), RequestCredentials.first("token=", "token"));
    }

    @Test
    void anAbsentOrMalformedParameterIsNone() {
        assertEquals(Optional.empty(), RequestCredentials.first(null, "token"));
        assertEquals(Optional.empty(), RequestCredentials.first("", "token"));
        assertEquals(Optional.empty(), RequestCredentials.first("tokens=1&xtoken=2", "token"));
        assertEquals(Optional.empty(), RequestCredentials.first("token=%zz", "token"));
        assertEquals(Optional.of("ok"), RequestCredentials.first("token=%zz&token=ok", "token"));
    }
}
