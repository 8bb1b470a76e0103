package dev.runner.local.secrets;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.runner.embedded.EmbeddedServers;
import dev.runner.local.iam.LocalIam;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Secrets Manager on one local port, enough of it for the SDK's and the AWS CLI's calls:
 * {@code GetSecretValue}, {@code PutSecretValue}, {@code CreateSecret} and {@code ListSecrets} over
 * the JSON 1.1 protocol ({@code X-Amz-Target: secretsmanager.<Operation>}). Each request is checked
 * against the caller's role as {@link LocalIam} plays it, so a function reading a secret its
 * policies do not name gets AccessDeniedException, as in AWS. Secrets live in memory; each
 * {@code PutSecretValue} makes a new current version.
 */
public final class LocalSecretsManager implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalSecretsManager.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    /** A secret's current version. */
    public record StoredSecret(String name, String arn, String versionId, String value, long createdEpochSeconds) {
        @Override
        public String toString() {
            return "StoredSecret[" + arn + ", version " + versionId + "]";
        }
    }

    /** What an operation answers: a status and a JSON body. */
    private record Answer(int status, ObjectNode body, String errorType) {
        static Answer ok(ObjectNode body) {
            return new Answer(200, body, null);
        }

        static Answer error(String type, String message) {
            return new Answer(400, JSON.createObjectNode().put("__type", type).put("message", message), type);
        }
    }

    private final HttpServer server;
    private final LocalIam iam;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<String, StoredSecret> byName = new ConcurrentHashMap<>();

    private LocalSecretsManager(HttpServer server, LocalIam iam, Clock clock) {
        this.server = server;
        this.iam = iam;
        this.clock = clock;
    }

    /** Takes the port now (0 = any free port), so a taken port fails before anything else starts. */
    public static LocalSecretsManager bind(int port, LocalIam iam, Clock clock) {
        try {
            return new LocalSecretsManager(HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64), iam, clock);
        } catch (BindException e) {
            throw new EmbeddedServers.PortTakenException("secretsmanager", port);
        } catch (IOException e) {
            throw new IllegalStateException("secretsmanager port " + port + ": " + e.getMessage(), e);
        }
    }

    public void start() {
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    public URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    /** Creates the secret unless it exists; returns the current version. */
    public StoredSecret createIfAbsent(String name, String value) {
        return byName.computeIfAbsent(name, n -> new StoredSecret(n, arn(n), UUID.randomUUID().toString(), value,
                clock.instant().getEpochSecond()));
    }

    /** A new current version of an existing secret (what a rotation does). */
    public StoredSecret put(String id, String value) {
        StoredSecret current = find(id).orElseThrow(() -> new IllegalArgumentException("no secret " + id));
        StoredSecret next = new StoredSecret(current.name(), current.arn(), UUID.randomUUID().toString(), value,
                clock.instant().getEpochSecond());
        byName.put(current.name(), next);
        return next;
    }

    /** By name, full ARN, or ARN without its random suffix, as Secrets Manager finds a SecretId. */
    public Optional<StoredSecret> find(String id) {
        if (id == null) {
            return Optional.empty();
        }
        StoredSecret byItsName = byName.get(id);
        if (byItsName != null) {
            return Optional.of(byItsName);
        }
        return byName.values().stream().filter(s -> s.arn().equals(id) || s.arn().startsWith(id + "-")).findFirst();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }

    private String arn(String name) {
        StringBuilder suffix = new StringBuilder(6);
        for (int i = 0; i < 6; i++) {
            suffix.append(ALPHANUMERIC.charAt(random.nextInt(ALPHANUMERIC.length())));
        }
        return "arn:aws:secretsmanager:" + iam.stack().region() + ":" + iam.stack().accountId() + ":secret:" + name + "-" + suffix;
    }

    private void handle(HttpExchange exchange) {
        try (exchange) {
            Answer answer = answer(exchange);
            byte[] body = JSON.writeValueAsBytes(answer.body());
            exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.1");
            exchange.getResponseHeaders().set("x-amzn-RequestId", UUID.randomUUID().toString());
            if (answer.errorType() != null) {
                exchange.getResponseHeaders().set("x-amzn-ErrorType", answer.errorType());
            }
            exchange.sendResponseHeaders(answer.status(), body.length);
            exchange.getResponseBody().write(body);
        } catch (IOException e) {
            LOG.debug("client went away: {}", e.toString());
        }
    }

    private Answer answer(HttpExchange exchange) throws IOException {
        String target = exchange.getRequestHeaders().getFirst("X-Amz-Target");
        if (!"POST".equals(exchange.getRequestMethod()) || target == null || !target.startsWith("secretsmanager.")) {
            return Answer.error("UnknownOperationException", "expected a POST with X-Amz-Target: secretsmanager.<Operation>");
        }
        String operation = target.substring("secretsmanager.".length());
        JsonNode request;
        try {
            byte[] bytes = exchange.getRequestBody().readNBytes(1024 * 1024);
            request = bytes.length == 0 ? JSON.createObjectNode() : JSON.readTree(bytes);
        } catch (IOException e) {
            return Answer.error("SerializationException", "the request body is not JSON");
        }
        String accessKey = LocalIam.accessKeyId(exchange.getRequestHeaders().getFirst("Authorization"));
        String secretId = request.path("SecretId").asText(request.path("Name").asText(null));
        Optional<StoredSecret> secret = find(secretId);
        String resource = secret.map(StoredSecret::arn).orElse(secretId == null ? "*" : secretId);
        String denial = iam.denial(accessKey, "secretsmanager:" + operation, resource);
        if (denial != null) {
            return Answer.error("AccessDeniedException", denial);
        }
        return switch (operation) {
            case "GetSecretValue" -> secret.map(s -> Answer.ok(value(s)))
                    .orElseGet(LocalSecretsManager::notFound);
            case "PutSecretValue" -> {
                if (secret.isEmpty()) {
                    yield notFound();
                }
                StoredSecret next = put(secret.get().arn(), request.path("SecretString").asText(""));
                yield Answer.ok(identity(next).put("VersionId", next.versionId()).set("VersionStages",
                        JSON.createArrayNode().add("AWSCURRENT")));
            }
            case "CreateSecret" -> {
                if (secret.isPresent()) {
                    yield Answer.error("ResourceExistsException", "The operation failed because the secret " + secretId + " already exists.");
                }
                StoredSecret created = createIfAbsent(secretId, request.path("SecretString").asText(""));
                yield Answer.ok(identity(created).put("VersionId", created.versionId()));
            }
            case "ListSecrets" -> {
                var list = JSON.createArrayNode();
                byName.values().forEach(s -> list.add(identity(s).put("CreatedDate", s.createdEpochSeconds())));
                yield Answer.ok(JSON.createObjectNode().set("SecretList", list));
            }
            default -> Answer.error("UnknownOperationException", "the local Secrets Manager does not answer " + operation);
        };
    }

    private static ObjectNode value(StoredSecret secret) {
        return identity(secret).put("VersionId", secret.versionId()).put("SecretString", secret.value())
                .put("CreatedDate", secret.createdEpochSeconds())
                .set("VersionStages", JSON.createArrayNode().add("AWSCURRENT"));
    }

    private static ObjectNode identity(StoredSecret secret) {
        return JSON.createObjectNode().put("ARN", secret.arn()).put("Name", secret.name());
    }

    private static Answer notFound() {
        return Answer.error("ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
    }

    /** A JSON object of text fields: a secret value such as the database login. */
    public static String json(Map<String, String> fields) {
        ObjectNode node = JSON.createObjectNode();
        fields.forEach(node::put);
        return node.toString();
    }
}
