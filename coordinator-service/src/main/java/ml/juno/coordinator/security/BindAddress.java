package ml.juno.coordinator.security;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Whether a listen address reaches only this machine. */
public final class BindAddress {

    private BindAddress() {
    }

    /** True for 127.0.0.0/8, ::1 and names that resolve only to those ({@code localhost}); false for 0.0.0.0 and others. */
    public static boolean isLoopback(String host) {
        if (host == null || host.isBlank()) {
            return false;
        }
        try {
            InetAddress[] all = InetAddress.getAllByName(host.strip());
            for (InetAddress a : all) {
                if (!a.isLoopbackAddress()) {
                    return false;
                }
            }
            return all.length > 0;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
