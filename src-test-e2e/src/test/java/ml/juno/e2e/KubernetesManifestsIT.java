package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import ml.juno.coordinator.tls.TlsDir;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code deploy/kubernetes}, read into the fabric8 Kubernetes model (no field the model does not know, anywhere) and
 * checked against the real apps: probe paths and ports against the SmallRye Health endpoints and the ports of the
 * apps' {@code application.properties}, the coordinator's args against the real {@code juno coordinator} command
 * line, its {@code --nodes} against the StatefulSet and its headless Service, the nodes' TLS settings against
 * {@code TlsDir.nodeProperties} (what {@code juno node --tls-dir} sets), the secrets against the kustomization's
 * generators and the files the documented {@code juno certs} command writes. No cluster is needed; where
 * {@code kubectl} is installed, {@code kubectl kustomize} also builds the whole set.
 */
class KubernetesManifestsIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path K8S = ROOT.resolve("deploy/kubernetes");
    static final YAMLMapper YAML = new YAMLMapper();
    static final String HEALTH_LIVE = "/q/health/live";
    static final String HEALTH_READY = "/q/health/ready";

    static Map<String, HasMetadata> objects; // "Kind/name" -> object, from every resource of the kustomization
    static JsonNode kustomization;

    @TempDir
    Path tmp;

    @BeforeAll
    static void read() throws IOException {
        kustomization = YAML.readTree(K8S.resolve("kustomization.yaml").toFile());
        objects = new LinkedHashMap<>();
        for (JsonNode r : kustomization.get("resources")) {
            for (HasMetadata o : parse(K8S.resolve(r.asText()))) {
                assertFalse(objects.containsKey(key(o)), "defined twice: " + key(o));
                objects.put(key(o), o);
            }
        }
    }

    static String key(HasMetadata o) {
        return o.getKind() + "/" + o.getMetadata().getName();
    }

    /** Every document of a YAML file as its fabric8 type, after checking that no field lands in additionalProperties. */
    static List<HasMetadata> parse(Path file) throws IOException {
        return parse(Files.readString(file), file.getFileName().toString());
    }

    static List<HasMetadata> parse(String yaml, String name) throws IOException {
        Map<String, Class<? extends HasMetadata>> kinds = Map.of("Namespace", Namespace.class, "PersistentVolumeClaim",
                PersistentVolumeClaim.class, "Service", Service.class, "StatefulSet", StatefulSet.class, "Deployment", Deployment.class,
                "Pod", Pod.class, "Secret", Secret.class);
        List<HasMetadata> out = new ArrayList<>();
        try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(yaml)) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc == null || doc.isEmpty()) {
                    continue;
                }
                String kind = doc.path("kind").asText();
                Class<? extends HasMetadata> type = kinds.get(kind);
                assertNotNull(type, name + ": unexpected kind '" + kind + "'");
                HasMetadata o = YAML.treeToValue(doc, type);
                List<String> unknown = new ArrayList<>();
                unknownFields(o, kind, unknown);
                assertEquals(List.of(), unknown, name + ": fields the Kubernetes model does not know (typos?)");
                out.add(o);
            }
        }
        return out;
    }

    /** Walks a fabric8 object's getters and collects every non-empty additionalProperties (where unknown fields go). */
    static void unknownFields(Object o, String path, List<String> unknown) {
        if (o == null) {
            return;
        }
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) {
                unknownFields(e, path + "[" + i++ + "]", unknown);
            }
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> unknownFields(v, path + "." + k, unknown));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method g : o.getClass().getMethods()) {
            if (g.getParameterCount() != 0 || Modifier.isStatic(g.getModifiers()) || !g.getName().startsWith("get")
                    || g.getDeclaringClass() == Object.class) {
                continue;
            }
            Object v;
            try {
                v = g.invoke(o);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(g.toString(), e);
            }
            if (g.getName().equals("getAdditionalProperties")) {
                if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    unknown.add(path + ": " + extra.keySet());
                }
            } else if (!(o instanceof Quantity) && !g.getName().equals("getValue")) {
                unknownFields(v, path + "." + g.getName().substring(3), unknown);
            }
        }
    }

    static <T> T get(Class<T> type, String kind, String name) {
        HasMetadata o = objects.get(kind + "/" + name);
        assertNotNull(o, kind + "/" + name + " in deploy/kubernetes");
        return type.cast(o);
    }

    static StatefulSet nodes() {
        return get(StatefulSet.class, "StatefulSet", "node");
    }

    static Deployment coordinatorDeployment() {
        return get(Deployment.class, "Deployment", "coordinator");
    }

    static Container only(PodSpec spec) {
        assertEquals(1, spec.getContainers().size(), "one container");
        return spec.getContainers().get(0);
    }

    static Properties appProperties(String module) throws IOException {
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(ROOT.resolve(module).resolve("src/main/resources/application.properties"))) {
            p.load(in);
        }
        return p;
    }

    /** The SmallRye Health root of an app ({@code /q/health} unless its properties move it). */
    static String healthRoot(String module) throws IOException {
        Properties p = appProperties(module);
        String nonApp = p.getProperty("quarkus.http.non-application-root-path", "q");
        return p.getProperty("quarkus.smallrye-health.root-path", "/" + nonApp.replaceAll("^/|/$", "") + "/health");
    }

    static int containerPort(Container c, String name) {
        return c.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no port named " + name + " on " + c.getName())).getContainerPort();
    }

    static String env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(EnvVar::getValue).findFirst()
                .orElseThrow(() -> new AssertionError("no env " + name + " on " + c.getName()));
    }

    static String mountPath(Container c, String volume) {
        return c.getVolumeMounts().stream().filter(m -> m.getName().equals(volume)).map(VolumeMount::getMountPath).findFirst()
                .orElseThrow(() -> new AssertionError("volume " + volume + " not mounted in " + c.getName()));
    }

    static Volume volume(PodSpec spec, String name) {
        return spec.getVolumes().stream().filter(v -> v.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no volume " + name));
    }

    /** The coordinator container's args, parsed by the real {@code juno coordinator} command line. */
    static CommandLine.ParseResult coordinatorArgs() {
        List<String> args = only(coordinatorDeployment().getSpec().getTemplate().getSpec()).getArgs();
        assertEquals("coordinator", args.get(0), "the image's entrypoint is the juno CLI: " + args);
        CommandLine cli = new CommandLine(new ml.juno.cli.Juno());
        CommandLine.ParseResult top = cli.parseArgs(args.toArray(String[]::new)); // an unknown option or bad value throws
        assertTrue(top.hasSubcommand());
        return top.subcommand();
    }

    static String arg(CommandLine.ParseResult r, String option) {
        assertTrue(r.hasMatchedOption(option), "the coordinator's args set " + option);
        return String.valueOf((Object) r.matchedOptionValue(option, null));
    }

    // ---- the nodes ----------------------------------------------------------------------------------------------

    @Test
    void nodes_areAStatefulSetBehindAHeadlessService_publishingNotReadyPods_startingInParallel() {
        StatefulSet sts = nodes();
        Service headless = get(Service.class, "Service", sts.getSpec().getServiceName());
        assertEquals("None", headless.getSpec().getClusterIP(), "the nodes' Service is headless (stable per-pod DNS names)");
        assertEquals(Boolean.TRUE, headless.getSpec().getPublishNotReadyAddresses(),
                "a node is ready only after the coordinator loaded it, so its name must resolve before");
        assertEquals("Parallel", sts.getSpec().getPodManagementPolicy(), "OrderedReady would wait for node-0's readiness forever");
        Map<String, String> podLabels = sts.getSpec().getTemplate().getMetadata().getLabels();
        assertTrue(podLabels.entrySet().containsAll(headless.getSpec().getSelector().entrySet()), "the Service selects the node pods");
        assertTrue(podLabels.entrySet().containsAll(sts.getSpec().getSelector().getMatchLabels().entrySet()));
        Container node = only(sts.getSpec().getTemplate().getSpec());
        assertEquals(1, headless.getSpec().getPorts().size());
        assertEquals(containerPort(node, "grpc"), headless.getSpec().getPorts().get(0).getPort());
        assertEquals("grpc", headless.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        EnvVar id = node.getEnv().stream().filter(e -> e.getName().equals("POD_NAME")).findFirst().orElseThrow();
        assertEquals("metadata.name", id.getValueFrom().getFieldRef().getFieldPath(), "the pod's own name");
        assertEquals("$(POD_NAME)", env(node, "JUNO_NODE_ID"));
    }

    @Test
    void nodePort_isTheNodeAppsPort_forGrpcAndHealth() throws IOException {
        Container node = only(nodes().getSpec().getTemplate().getSpec());
        int appPort = Integer.parseInt(appProperties("node-service").getProperty("quarkus.http.port"));
        assertEquals(appPort, containerPort(node, "grpc"), "node-service's quarkus.http.port");
        assertEquals(Integer.toString(appPort), env(node, "QUARKUS_HTTP_PORT"));
        String dockerfile = Files.readString(ROOT.resolve("deploy/docker/node.Dockerfile"));
        assertTrue(dockerfile.contains("EXPOSE " + appPort + "\n"), "the node image exposes " + appPort);
    }

    @Test
    void nodeProbes_curlTheNodesHealthEndpoints_overMutualTls_withThePodsOwnCertificate() throws IOException {
        Container node = only(nodes().getSpec().getTemplate().getSpec());
        String root = healthRoot("node-service");
        assertEquals("/q/health", root);
        int port = containerPort(node, "grpc");
        String tls = mountPath(node, "tls");
        Map<String, Probe> probes = Map.of(root + "/live", node.getLivenessProbe(), root + "/ready", node.getReadinessProbe(),
                root + "/live ", node.getStartupProbe());
        for (var e : probes.entrySet()) {
            Probe p = e.getValue();
            assertNotNull(p, "probe for " + e.getKey());
            List<String> cmd = p.getExec().getCommand();
            assertEquals(List.of("sh", "-c"), cmd.subList(0, 2));
            String line = cmd.get(2);
            assertTrue(line.startsWith("curl -fsS "), line);
            assertTrue(line.endsWith(" https://localhost:" + port + e.getKey().strip()), line);
            assertTrue(line.contains("--cacert " + tls + "/ca.pem"), line);
            assertTrue(line.contains("--cert " + tls + "/$POD_NAME.pem") && line.contains("--key " + tls + "/$POD_NAME-key.pem"), line);
        }
        assertTrue(node.getStartupProbe().getFailureThreshold() * node.getStartupProbe().getPeriodSeconds() >= 60, "a minute to start");
    }

    @Test
    void nodeTlsSettings_areWhatJunoNodeTlsDirSets_forThePodsName() throws Exception {
        Container node = only(nodes().getSpec().getTemplate().getSpec());
        Map<String, String> set = new LinkedHashMap<>();
        Matcher m = Pattern.compile("-D([^=\\s]+)=(\\S+)").matcher(env(node, "JAVA_OPTS"));
        while (m.find()) {
            set.put(m.group(1), m.group(2));
        }
        Path certs = Files.createDirectories(tmp.resolve("tls"));
        ml.juno.coordinator.tls.ClusterCertificates.write(certs, 1, List.of(), Duration.ofDays(1));
        int port = containerPort(node, "grpc");
        Map<String, String> want = new LinkedHashMap<>();
        TlsDir.nodeProperties(certs, "node-0", port).forEach((k, v) ->
                want.put(k, v.replace(certs.toAbsolutePath().toString(), mountPath(node, "tls")).replace("node-0", "$(POD_NAME)")));
        assertEquals(want, set, "the node's -D settings in JAVA_OPTS");
        assertEquals("juno-tls-nodes", secretName(volume(nodes().getSpec().getTemplate().getSpec(), "tls")));
    }

    // ---- the coordinator ------------------------------------------------------------------------------------------

    @Test
    void coordinatorArgs_areValidJunoCoordinatorOptions_andListEveryNodeByItsStableName() {
        CommandLine.ParseResult r = coordinatorArgs();
        assertEquals("coordinator", r.commandSpec().name());
        StatefulSet sts = nodes();
        int port = containerPort(only(sts.getSpec().getTemplate().getSpec()), "grpc");
        List<String> want = new ArrayList<>();
        for (int i = 0; i < sts.getSpec().getReplicas(); i++) {
            want.add(sts.getMetadata().getName() + "-" + i + "." + sts.getSpec().getServiceName() + ":" + port);
        }
        assertEquals(String.join(",", want), arg(r, "--nodes"), "one address per replica, node-I.<headless service>:<port>, in rank order");
        assertTrue(Set.of("pipeline", "tensor").contains(arg(r, "--pType")));
        assertEquals("0.0.0.0", arg(r, "--host"), "the Service reaches the pod's address, not its loopback");
    }

    @Test
    void coordinatorPortAndProbes_matchTheApi_andItsHealthEndpoints() throws IOException {
        CommandLine.ParseResult r = coordinatorArgs();
        Container c = only(coordinatorDeployment().getSpec().getTemplate().getSpec());
        int port = containerPort(c, "http");
        assertEquals(Integer.toString(port), arg(r, "--api-port"));
        String root = healthRoot("coordinator-service");
        assertEquals(root + "/live", c.getLivenessProbe().getHttpGet().getPath());
        assertEquals(root + "/ready", c.getReadinessProbe().getHttpGet().getPath());
        assertEquals(root + "/live", c.getStartupProbe().getHttpGet().getPath());
        for (Probe p : List.of(c.getLivenessProbe(), c.getReadinessProbe(), c.getStartupProbe())) {
            assertEquals("http", p.getHttpGet().getPort().getStrVal());
            assertTrue(p.getHttpGet().getScheme() == null || p.getHttpGet().getScheme().equals("HTTP"), "the API is plain HTTP");
        }
        assertTrue(c.getStartupProbe().getFailureThreshold() * c.getStartupProbe().getPeriodSeconds() >= 120,
                "loading every shard may take minutes");
        Service svc = get(Service.class, "Service", "coordinator");
        assertEquals("http", svc.getSpec().getPorts().get(0).getTargetPort().getStrVal());
        assertTrue(coordinatorDeployment().getSpec().getTemplate().getMetadata().getLabels().entrySet()
                .containsAll(svc.getSpec().getSelector().entrySet()), "the Service selects the coordinator pod");
        assertEquals(1, coordinatorDeployment().getSpec().getReplicas(), "one coordinator owns its nodes");
        assertEquals("Recreate", coordinatorDeployment().getSpec().getStrategy().getType());
    }

    @Test
    void coordinatorFiles_tlsDirApiKeysAndModel_lieInItsMounts() {
        CommandLine.ParseResult r = coordinatorArgs();
        PodSpec spec = coordinatorDeployment().getSpec().getTemplate().getSpec();
        Container c = only(spec);
        assertEquals(mountPath(c, "tls"), arg(r, "--tls-dir"));
        // the secret's files are the generator's: ClusterOptions.tlsDir needs these three
        assertEquals(Set.of("ca.pem", "coordinator.pem", "coordinator-key.pem"), generatedKeys(secretName(volume(spec, "tls"))));
        Path keyFile = Path.of(arg(r, "--api-key-file"));
        assertEquals(mountPath(c, "api-keys"), keyFile.getParent().toString());
        assertEquals(Set.of(keyFile.getFileName().toString()), generatedKeys(secretName(volume(spec, "api-keys"))));
        Path model = Path.of(arg(r, "--model-path"));
        assertEquals(mountPath(c, "models"), model.getParent().toString());
        // the nodes open the same path: the same claim at the same mount, which is their models dir
        PodSpec nodeSpec = nodes().getSpec().getTemplate().getSpec();
        Container node = only(nodeSpec);
        assertEquals(mountPath(c, "models"), mountPath(node, "models"));
        assertEquals(mountPath(node, "models"), env(node, "JUNO_NODE_MODELS_DIR"));
        String claim = volume(spec, "models").getPersistentVolumeClaim().getClaimName();
        assertEquals(claim, volume(nodeSpec, "models").getPersistentVolumeClaim().getClaimName());
        get(PersistentVolumeClaim.class, "PersistentVolumeClaim", claim);
        for (Container k : List.of(c, node)) {
            assertTrue(k.getVolumeMounts().stream().filter(v -> v.getName().equals("models")).allMatch(VolumeMount::getReadOnly),
                    "the model is mounted read-only");
        }
    }

    // ---- secrets, resources, security ---------------------------------------------------------------------------

    static String secretName(Volume v) {
        assertNotNull(v.getSecret(), v.getName() + " is a secret volume");
        return v.getSecret().getSecretName();
    }

    /** The file names (secret keys) of the kustomization's secret generator {@code name}. */
    static Set<String> generatedKeys(String name) {
        for (JsonNode g : kustomization.get("secretGenerator")) {
            if (g.get("name").asText().equals(name)) {
                Set<String> keys = new TreeSet<>();
                g.get("files").forEach(f -> keys.add(Path.of(f.asText()).getFileName().toString()));
                return keys;
            }
        }
        throw new AssertionError("no secretGenerator named " + name + " in deploy/kubernetes/kustomization.yaml");
    }

    @Test
    void secrets_everyReferencedSecretIsGenerated_fromTheFilesTheDocumentedJunoCertsCommandWrites() throws Exception {
        Set<String> referenced = new TreeSet<>();
        for (PodSpec spec : List.of(nodes().getSpec().getTemplate().getSpec(), coordinatorDeployment().getSpec().getTemplate().getSpec())) {
            spec.getVolumes().stream().filter(v -> v.getSecret() != null).forEach(v -> referenced.add(v.getSecret().getSecretName()));
        }
        Set<String> generated = new TreeSet<>();
        kustomization.get("secretGenerator").forEach(g -> generated.add(g.get("name").asText()));
        assertEquals(generated, referenced, "secrets referenced by the pods = secrets the kustomization generates");

        // the command in kustomization.yaml's header, run by the real CLI into a temporary folder
        String text = Files.readString(K8S.resolve("kustomization.yaml"));
        Matcher m = Pattern.compile("\\./juno (certs --out deploy/kubernetes/tls [^\\n]+)").matcher(text);
        assertTrue(m.find(), "kustomization.yaml shows the juno certs command");
        List<String> args = new ArrayList<>(List.of(m.group(1).strip().split("\\s+")));
        args.set(args.indexOf("--out") + 1, tmp.resolve("tls").toString());
        StringWriter out = new StringWriter();
        assertEquals(0, ml.juno.cli.Juno.execute(args.toArray(String[]::new), new PrintWriter(out), new PrintWriter(out)), out.toString());
        int replicas = nodes().getSpec().getReplicas();
        assertEquals(Integer.toString(replicas), args.get(args.indexOf("--nodes") + 1), "a certificate per replica");
        for (JsonNode g : kustomization.get("secretGenerator")) {
            for (JsonNode f : g.get("files")) {
                Path file = Path.of(f.asText());
                if (file.startsWith("tls")) {
                    assertTrue(Files.isRegularFile(tmp.resolve(file)), g.get("name").asText() + ": juno certs writes no " + file);
                    assertFalse(file.getFileName().toString().equals("ca-key.pem"), "the CA's key stays outside the cluster");
                }
            }
        }
        Set<String> nodeKeys = generatedKeys("juno-tls-nodes");
        for (int i = 0; i < replicas; i++) {
            assertTrue(nodeKeys.containsAll(Set.of("node-" + i + ".pem", "node-" + i + "-key.pem")), "node-" + i + "'s pair: " + nodeKeys);
            // the coordinator verifies the host it dialled (node-I.node) against the certificate it is shown
            X509Certificate cert;
            try (var in = Files.newInputStream(tmp.resolve("tls/node-" + i + ".pem"))) {
                cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
            }
            Set<String> sans = cert.getSubjectAlternativeNames().stream().map(l -> String.valueOf(l.get(1))).collect(Collectors.toSet());
            String host = arg(coordinatorArgs(), "--nodes").split(",")[i].split(":")[0];
            assertTrue(sans.contains(host), "node-" + i + ".pem names " + host + ": " + sans);
        }
        String ignore = Files.readString(ROOT.resolve(".gitignore"));
        assertTrue(ignore.contains("/deploy/kubernetes/tls/") && ignore.contains("/deploy/kubernetes/api-keys"), "keys are never committed");
    }

    @Test
    void everyContainer_hasRequestsWithinLimits_andRunsAsTheImagesUnprivilegedUser() throws IOException {
        Matcher uid = Pattern.compile("useradd [^\\n]*--uid (\\d+)").matcher(Files.readString(ROOT.resolve("deploy/docker/node.Dockerfile")));
        assertTrue(uid.find(), "node.Dockerfile gives user juno a fixed uid");
        assertTrue(Files.readString(ROOT.resolve("deploy/docker/coordinator.Dockerfile")).contains("--uid " + uid.group(1)), "both images, the same uid");
        for (PodSpec spec : List.of(nodes().getSpec().getTemplate().getSpec(), coordinatorDeployment().getSpec().getTemplate().getSpec())) {
            Container c = only(spec);
            assertEquals(Long.parseLong(uid.group(1)), spec.getSecurityContext().getRunAsUser(), c.getName());
            assertEquals(spec.getSecurityContext().getRunAsUser(), spec.getSecurityContext().getFsGroup(), c.getName() + ": secrets readable by its group");
            assertEquals(Boolean.TRUE, spec.getSecurityContext().getRunAsNonRoot());
            assertEquals(Boolean.FALSE, c.getSecurityContext().getAllowPrivilegeEscalation());
            for (String r : List.of("cpu", "memory")) {
                Quantity req = c.getResources().getRequests().get(r);
                Quantity lim = c.getResources().getLimits().get(r);
                assertNotNull(req, c.getName() + " requests " + r);
                assertNotNull(lim, c.getName() + " limits " + r);
                assertTrue(Quantity.getAmountInBytes(req).compareTo(Quantity.getAmountInBytes(lim)) <= 0, c.getName() + " " + r + ": request > limit");
            }
            assertTrue(spec.getTerminationGracePeriodSeconds() > 30, "longer than the 30 s drain");
        }
    }

    @Test
    void everyFileInTheFolder_isInTheKustomization_exceptTheModelLoader() throws IOException {
        Set<String> listed = new TreeSet<>();
        kustomization.get("resources").forEach(r -> listed.add(r.asText()));
        Set<String> files;
        try (var s = Files.list(K8S)) {
            files = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml")).collect(Collectors.toCollection(TreeSet::new));
        }
        files.removeAll(Set.of("kustomization.yaml", "model-loader.yaml"));
        assertEquals(files, listed);
        Pod loader = (Pod) parse(K8S.resolve("model-loader.yaml")).get(0);
        assertEquals(volume(nodes().getSpec().getTemplate().getSpec(), "models").getPersistentVolumeClaim().getClaimName(),
                volume(loader.getSpec(), "models").getPersistentVolumeClaim().getClaimName());
        assertEquals(kustomization.get("namespace").asText(), loader.getMetadata().getNamespace());
    }

    @Test
    void aMistypedField_isRefused() throws IOException {
        String text = Files.readString(K8S.resolve("node-statefulset.yaml")).replace("readinessProbe:", "readinesProbe:");
        AssertionError e = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class, () -> parse(text, "typo.yaml"));
        assertTrue(e.getMessage().contains("readinesProbe"), e.getMessage());
    }

    @Test
    void kubectlKustomize_buildsTheSet_withEverySecretThePodsName() throws Exception {
        Shell.Result version;
        try {
            version = Shell.run(List.of("kubectl", "version", "--client"), ROOT, Map.of(), Duration.ofSeconds(30));
        } catch (IOException missing) {
            version = null;
        }
        Assumptions.assumeTrue(version != null && version.exitCode() == 0, "kubectl is not installed: kubectl kustomize not run");
        Path copy = Files.createDirectories(tmp.resolve("kubernetes"));
        try (var s = Files.list(K8S)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                Files.copy(p, copy.resolve(p.getFileName()));
            }
        }
        StringWriter out = new StringWriter();
        assertEquals(0, ml.juno.cli.Juno.execute(new String[] {"certs", "--out", copy.resolve("tls").toString(), "--nodes", "2",
                "--host", "node-0.node,node-1.node"}, new PrintWriter(out), new PrintWriter(out)), out.toString());
        Files.writeString(copy.resolve("api-keys"), "me:0123456789abcdef\n");
        Shell.Result r = Shell.run(List.of("kubectl", "kustomize", copy.toString()), ROOT, Map.of(), Duration.ofSeconds(60));
        assertEquals(0, r.exitCode(), r.describe());
        List<HasMetadata> built = parse(r.out(), "kubectl kustomize");
        Set<String> secrets = built.stream().filter(o -> o instanceof Secret).map(o -> o.getMetadata().getName()).collect(Collectors.toSet());
        int pods = 0;
        for (HasMetadata o : built) {
            assertEquals("juno", o instanceof Namespace ? o.getMetadata().getName() : o.getMetadata().getNamespace(), key(o));
            PodSpec spec = o instanceof StatefulSet s ? s.getSpec().getTemplate().getSpec() : o instanceof Deployment d ? d.getSpec().getTemplate().getSpec() : null;
            if (spec != null) {
                pods++;
                for (Volume v : spec.getVolumes()) {
                    if (v.getSecret() != null) {
                        assertTrue(secrets.contains(v.getSecret().getSecretName()), key(o) + " mounts " + v.getSecret().getSecretName() + "; built: " + secrets);
                    }
                }
            }
        }
        assertEquals(2, pods);
        Secret nodesTls = built.stream().filter(o -> o instanceof Secret && o.getMetadata().getName().startsWith("juno-tls-nodes")).map(Secret.class::cast)
                .findFirst().orElseThrow();
        String cert = new String(java.util.Base64.getMimeDecoder().decode(nodesTls.getData().get("node-1.pem")), StandardCharsets.UTF_8);
        assertEquals(Files.readString(copy.resolve("tls/node-1.pem")), cert);
    }
}
