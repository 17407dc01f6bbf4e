package ml.juno.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * {@code --pin}: each process of a benchmark on a core of its own, with {@code taskset} (util-linux). The cores are the
 * ones this process may run on ({@code Cpus_allowed_list} of {@code /proc/self/status}), so a bench started under
 * {@code taskset} or in a cgroup cpuset stays inside it.
 */
final class CpuPinning {

    private CpuPinning() {
    }

    /** The cores this process may run on, ascending; all {@link Runtime#availableProcessors()} where Linux does not say. */
    static List<Integer> allowedCpus() {
        try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/self/status"))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return parseList(line.substring(line.indexOf(':') + 1));
                }
            }
        } catch (IOException | RuntimeException unknown) {
            // not Linux: fall through
        }
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            all.add(i);
        }
        return all;
    }

    /** A Linux CPU list ({@code 0-3,6,8-9}) as core numbers, ascending. */
    static List<Integer> parseList(String list) {
        TreeSet<Integer> out = new TreeSet<>();
        for (String part : list.strip().split(",")) {
            String p = part.strip();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dash = p.indexOf('-');
                int lo = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int hi = dash < 0 ? lo : Integer.parseInt(p.substring(dash + 1));
                if (lo < 0 || hi < lo) {
                    throw new IllegalArgumentException("bad CPU range '" + p + "' in '" + list.strip() + "'");
                }
                for (int c = lo; c <= hi; c++) {
                    out.add(c);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad CPU list '" + list.strip() + "'");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("empty CPU list '" + list.strip() + "'");
        }
        return List.copyOf(out);
    }

    /**
     * One core for each of {@code processes} processes from {@code cpus}, in order; a clear error when there are fewer
     * cores than processes (pinning two to one core would measure them taking turns).
     */
    static List<Integer> assign(int processes, List<Integer> cpus) {
        if (processes > cpus.size()) {
            throw new CliException("--pin puts each process on a core of its own: " + processes + " node processes, but this process may use only "
                    + cpus.size() + " core" + (cpus.size() == 1 ? "" : "s") + " (" + describe(cpus) + "); use fewer --nodes or drop --pin");
        }
        return List.copyOf(cpus.subList(0, processes));
    }

    /** {@code cmd} started on core {@code cpu} only ({@code taskset} execs it, so the process's pid is the command's). */
    static List<String> onCpu(int cpu, List<String> cmd) {
        List<String> out = new ArrayList<>(List.of("taskset", "-c", Integer.toString(cpu)));
        out.addAll(cmd);
        return out;
    }

    /** Pins every thread of this process (and so the threads they start) to core {@code cpu}. */
    static void pinThisProcess(int cpu) {
        run(List.of("taskset", "-a", "-p", "-c", Integer.toString(cpu), Long.toString(ProcessHandle.current().pid())));
    }

    /** A clear error when {@code taskset} cannot be run here. */
    static void requireTaskset() {
        run(List.of("taskset", "-c", "0", "true"));
    }

    private static void run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
            int rc = p.waitFor();
            if (rc != 0) {
                throw new CliException("--pin: '" + String.join(" ", cmd) + "' failed (exit " + rc + "): " + out);
            }
        } catch (IOException e) {
            throw new CliException("--pin needs taskset (util-linux) on the PATH: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("--pin: interrupted");
        }
    }

    /** {@code 0-1} style for messages. */
    static String describe(List<Integer> cpus) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cpus.size(); ) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            b.append(b.isEmpty() ? "" : ",").append(cpus.get(i)).append(j > i ? "-" + cpus.get(j) : "");
            i = j + 1;
        }
        return b.toString();
    }
}
