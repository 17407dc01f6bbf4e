package ml.juno.engine.gguf;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The file tables of {@code models/testdata/SOURCES.md}: for each listed GGUF its sha256, size and tensor type
 * counts ("Q4_K 13, Q6_K 3, F32 5" or "F16 ×37 (all matrices), F32 ×11 (norms)"; "–" means no tensors).
 */
record SourcesTable(Map<String, Row> rows) {

    record Row(String fileName, String sha256, long size, Map<String, Integer> typeCounts) {}

    private static final Pattern GGUF = Pattern.compile("([\\w./-]+\\.gguf)");
    private static final Pattern SHA = Pattern.compile("\\b([0-9a-f]{64})\\b");
    private static final Pattern TYPE_LIST = Pattern.compile(
            "[A-Z0-9_]+ ×?\\d+(\\s*\\([^)]*\\))?(\\s*,\\s*[A-Z0-9_]+ ×?\\d+(\\s*\\([^)]*\\))?)*");
    private static final Pattern TYPE_COUNT = Pattern.compile("([A-Z0-9_]+) ×?(\\d+)");

    static SourcesTable load(Path sourcesMd) throws IOException {
        Map<String, Row> rows = new LinkedHashMap<>();
        for (String line : Files.readAllLines(sourcesMd)) {
            if (!line.startsWith("|") || line.startsWith("|---")) {
                continue;
            }
            String[] cells = line.split("\\|");
            // cells[0] is empty (line starts with '|')
            if (cells.length < 4) {
                continue;
            }
            Matcher g = GGUF.matcher(cells[1]);
            if (!g.find()) {
                continue;
            }
            String name = Path.of(g.group(1)).getFileName().toString();
            Matcher sha = SHA.matcher(line);
            long size = -1;
            Map<String, Integer> types = null;
            for (int i = 2; i < cells.length; i++) {
                String c = cells[i].trim();
                if (size < 0 && c.matches("\\d+")) {
                    size = Long.parseLong(c);
                } else if (types == null && TYPE_LIST.matcher(c).matches()) {
                    types = new TreeMap<>();
                    Matcher m = TYPE_COUNT.matcher(c);
                    while (m.find()) {
                        types.merge(m.group(1), Integer.parseInt(m.group(2)), Integer::sum);
                    }
                }
            }
            if (types == null) {
                types = new TreeMap<>(); // vocab-only rows: "–" in the types column
            }
            rows.put(name, new Row(name, sha.find() ? sha.group(1) : null, size, types));
        }
        return new SourcesTable(rows);
    }
}
