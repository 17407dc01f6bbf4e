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

    @Test
    void aGrpcErrorMutinyDropsAfterTheStreamWasClosed_becomesOneInfoLine_aGrpcErrorElsewhereStays() {
        ClientHangups filter = new ClientHangups();
        LogRecord dropped = new LogRecord(Level.SEVERE, "Mutiny had to drop the following exception");
        dropped.setLoggerName("io.quarkus.mutiny.runtime.MutinyInfrastructure");
        dropped.setThrown(io.grpc.Status.UNAVAILABLE.withDescription("io exception").asRuntimeException());
        assertTrue(filter.isLoggable(dropped));
        assertEquals(Level.INFO, dropped.getLevel());
        assertNull(dropped.getThrown(), "no stack trace");
        assertEquals("a node's closed step stream ended late (UNAVAILABLE: io exception)", dropped.getMessage());

        LogRecord elsewhere = new LogRecord(Level.SEVERE, "loading the shard failed");
        elsewhere.setLoggerName("ml.juno.coordinator.cluster.NodeCluster");
        RuntimeException failure = io.grpc.Status.UNAVAILABLE.asRuntimeException();
        elsewhere.setThrown(failure);
        assertTrue(filter.isLoggable(elsewhere));
        assertEquals(Level.SEVERE, elsewhere.getLevel());
        assertSame(failure, elsewhere.getThrown());

        LogRecord otherDrop = new LogRecord(Level.SEVERE, "Mutiny had to drop the following exception");
        IllegalStateException bug = new IllegalStateException("bug");
        otherDrop.setThrown(bug);
        assertTrue(filter.isLoggable(otherDrop));
        assertEquals(Level.SEVERE, otherDrop.getLevel(), "only gRPC stream ends are quietened");
    }
}
