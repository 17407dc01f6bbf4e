package ml.juno.coordinator.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.IllegalReferenceCountException;
import io.vertx.core.http.HttpClosedException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class ClientHangupsTest {

    @Test
    void hangups_areRecognisedThroughWrappers() {
        assertTrue(ClientHangups.isHangup(new IOException(new IOException(new HttpClosedException("Connection was closed")))));
        assertTrue(ClientHangups.isHangup(new RuntimeException(new IllegalReferenceCountException(0, -1))));
        assertTrue(ClientHangups.isHangup(new ClosedChannelException()));
        assertTrue(ClientHangups.isHangup(new IOException("Connection reset by peer")));
        assertFalse(ClientHangups.isHangup(new IllegalStateException("the KV pool is corrupt")));
        assertFalse(ClientHangups.isHangup(new IOException("No space left on device")));
    }

    @Test
    void aHangupLoggedAsError_becomesOneInfoLine_otherErrorsStayAsTheyAre() {
        ClientHangups filter = new ClientHangups();
        LogRecord hangup = new LogRecord(Level.SEVERE, "request failed");
        hangup.setThrown(new IOException(new HttpClosedException("Connection was closed")));
        assertTrue(filter.isLoggable(hangup));
        assertEquals(Level.INFO, hangup.getLevel());
        assertNull(hangup.getThrown(), "no stack trace");
        assertEquals("a client hung up (HttpClosedException: Connection was closed)", hangup.getMessage());

        LogRecord real = new LogRecord(Level.SEVERE, "request failed");
        IllegalStateException bug = new IllegalStateException("bug");
        real.setThrown(bug);
        assertTrue(filter.isLoggable(real));
        assertEquals(Level.SEVERE, real.getLevel());
        assertSame(bug, real.getThrown());
    }
}
