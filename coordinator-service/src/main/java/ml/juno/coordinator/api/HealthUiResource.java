package ml.juno.coordinator.api;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code /health-ui} without the trailing slash: the dashboard's page itself (static files answer {@code /health-ui/}
 * only); the page names its assets by absolute paths, so both addresses work.
 */
@Path("/health-ui")
public class HealthUiResource {

    private static final String PAGE = read();

    @GET
    @Produces(MediaType.TEXT_HTML)
    public String page() {
        return PAGE;
    }

    private static String read() {
        try (InputStream in = HealthUiResource.class.getResourceAsStream("/META-INF/resources/health-ui/index.html")) {
            if (in == null) {
                throw new IllegalStateException("health-ui/index.html is missing from the application");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
