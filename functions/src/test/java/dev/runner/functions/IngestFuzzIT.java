package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.delivery.DeliveryIds;
import dev.runner.json.Json;
import dev.runner.store.Database;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Whatever batch the ingest queue hands over (any bodies, message and system attributes, ids, sizes), IngestFunction
 * never throws and retries nothing in vain; it takes exactly the messages signed with the tenant's secret, once,
 * whatever their neighbours, and nothing unbound. Real Postgres, Redis and SQS behind.
 */
class IngestFuzzIT {

    private static final AtomicLong TRIED = new AtomicLong();
    private static final List<String> ATTRIBUTE_NAMES = List.of("webhook-id", "webhook-timestamp", "webhook-signature", "SenderId",
            "SentTimestamp", "ApproximateReceiveCount", "error");

    private static PipelineFixture fixture;
    /** Unbound messages name it; it must never get an item. */
    private static PipelineFixture.Integration unbound;
    /** Signed messages name it. */
    private static PipelineFixture.Integration signed;

    @BeforeContainer
    static void start() {
        fixture = new PipelineFixture(Map.of());
        unbound = fixture.integration(true);
        signed = fixture.integration(true);
    }

    @AfterContainer
    static void stop() {
        System.out.println("IngestFuzzIT: " + TRIED.get() + " ingest messages tried");
        fixture.close();
    }

    /** A message as generated: its body, attributes and system attributes. */
    record Message(String body, Map<String, String> attributes, Map<String, String> system, String messageId) {}

    @Property(tries = 250)
    void anyBatchIsAnsweredWithoutThrowingAndTakesNothingUnbound(@ForAll("unboundBatches") List<Message> batch) {
        TRIED.addAndGet(batch.size());
        SQSBatchResponse response = ingest(event(batch));
        Statistics.collect(batch.size() > 5 ? "6-10 messages" : "1-5 messages");
        assertEquals(List.of(), Lambda.failedIds(response).stream().toList(), "nothing to retry: nothing failed");
        assertEquals(0L, count("select count(*) from execution_items where tenant_id = ?", unbound.tenantId()));
    }

    @Property(tries = 60)
    void signedMessagesAreTakenOnceWhateverTheirNeighbours(@ForAll("signedEnvelopes") List<ObjectNode> envelopes,
                                                          @ForAll("unboundBatches") List<Message> neighbours) {
        List<Message> batch = new ArrayList<>(neighbours);
        long now = Instant.now().getEpochSecond();
        for (int i = 0; i < envelopes.size(); i++) {
            batch.add(Math.min(i * 2, batch.size()), signed(Json.write(envelopes.get(i)), now));
        }
        List<Message> delivered = batch.subList(0, Math.min(batch.size(), 10));
        TRIED.addAndGet(delivered.size());
        Set<String> expected = delivered.stream().map(Message::body).filter(body -> body != null && body.contains(signed.tenantId()))
                .map(body -> Json.parse(body).path("externalId").asText()).collect(Collectors.toCollection(TreeSet::new));

        SQSEvent event = event(delivered);
        assertEquals(List.of(), Lambda.failedIds(ingest(event)).stream().toList());
        assertEquals(List.of(), Lambda.failedIds(ingest(event)).stream().toList(), "the same batch again, as SQS may deliver it");

        Statistics.collect(expected.size());
        List<String> taken = fixture.runner.database().query(
                "select external_id from execution_items where tenant_id = ? and external_id = any(?)",
                row -> row.getString(1), signed.tenantId(), Database.array("text", expected.toArray()));
        // Sorted here, not by Postgres: its collation orders odd code points unlike String.compareTo. A duplicate stays visible.
        assertEquals(List.copyOf(expected), taken.stream().sorted().toList(), "each signed message once, nothing else");
    }

    // ------------------------------------------------------------------ inputs

    @Provide
    Arbitrary<List<Message>> unboundBatches() {
        Arbitrary<String> body = Arbitraries.frequencyOf(
                FuzzInputs.weighted(5, envelopeLike(unbound).map(Json::write)),
                FuzzInputs.weighted(3, FuzzInputs.body().map(b -> new String(b, StandardCharsets.UTF_8))),
                FuzzInputs.weighted(1, Arbitraries.just(null)));
        Arbitrary<Map<String, String>> attributes = Arbitraries.oneOf(FuzzInputs.headers(ATTRIBUTE_NAMES),
                Arbitraries.longs().between(-1000, 1000).map(offset -> Map.of("webhook-id", "msg_" + UUID.randomUUID(),
                        "webhook-timestamp", Long.toString(Instant.now().getEpochSecond() + offset),
                        "webhook-signature", "v1," + Base64.getEncoder().encodeToString(UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8)))));
        Arbitrary<Map<String, String>> system = FuzzInputs.headers(ATTRIBUTE_NAMES);
        Arbitrary<String> messageId = Arbitraries.frequencyOf(FuzzInputs.weighted(9, Arbitraries.create(() -> UUID.randomUUID().toString())),
                FuzzInputs.weighted(1, Arbitraries.of("", " ")));
        return Combinators.combine(body, attributes, system, messageId).as(Message::new).list().ofMinSize(1).ofMaxSize(10);
    }

    @Provide
    Arbitrary<List<ObjectNode>> signedEnvelopes() {
        Arbitrary<String> externalId = FuzzInputs.text().filter(id -> !id.isBlank() && id.length() < 400 && DeliveryIds.problem("x", id) == null)
                .map(id -> id + "~" + UUID.randomUUID());
        Arbitrary<JsonNode> payload = FuzzInputs.json().filter(node -> !node.isNull() && !Json.write(node).contains("\\u0000"));
        return Combinators.combine(externalId, payload).as((id, body) -> {
            ObjectNode envelope = Json.object().put("tenantId", signed.tenantId()).put("integrationKey", signed.integrationKey())
                    .put("handlerKey", signed.handlerKey()).put("externalId", id);
            envelope.set("payload", body);
            return envelope;
        }).list().ofMinSize(1).ofMaxSize(5);
    }

    /** Envelopes whose every field may be right, wrong, missing or of another type. */
    private static Arbitrary<JsonNode> envelopeLike(PipelineFixture.Integration target) {
        Arbitrary<JsonNode> tenant = Arbitraries.oneOf(Arbitraries.just(Json.object().textNode(target.tenantId())), FuzzInputs.json());
        Arbitrary<JsonNode> integration = Arbitraries.oneOf(Arbitraries.just(Json.object().textNode(target.integrationKey())), FuzzInputs.json());
        Arbitrary<JsonNode> handler = Arbitraries.oneOf(Arbitraries.just(Json.object().textNode(target.handlerKey())), FuzzInputs.json());
        Arbitrary<JsonNode> externalId = Arbitraries.oneOf(FuzzInputs.text().map(t -> (JsonNode) Json.object().textNode(t)), FuzzInputs.json());
        return Combinators.combine(tenant, integration, handler, externalId, FuzzInputs.json()).as((t, i, h, e, p) -> {
            ObjectNode envelope = Json.object();
            envelope.set("tenantId", t);
            envelope.set("integrationKey", i);
            envelope.set("handlerKey", h);
            envelope.set("externalId", e);
            envelope.set("payload", p);
            return envelope;
        });
    }

    // ------------------------------------------------------------------ helpers

    /** Signed as docs/ingest.md says, by an HMAC written apart from the production signer. */
    private static Message signed(String body, long timestamp) {
        String id = "msg_" + UUID.randomUUID();
        String signature;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(Base64.getDecoder().decode(signed.webhookSecret().substring("whsec_".length())), "HmacSHA256"));
            signature = "v1," + Base64.getEncoder().encodeToString(mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        return new Message(body, Map.of("webhook-id", id, "webhook-timestamp", Long.toString(timestamp), "webhook-signature", signature),
                Map.of("SentTimestamp", Long.toString(timestamp * 1000), "ApproximateReceiveCount", "1"), UUID.randomUUID().toString());
    }

    private static SQSEvent event(List<Message> batch) {
        return Lambda.sqsEvent(batch.stream().map(message -> Lambda.sqsRecord(message.messageId(), "rh-" + message.messageId(),
                message.body(), fixture.stack.arn("ingest"), message.system(), message.attributes())).toList());
    }

    private static SQSBatchResponse ingest(SQSEvent event) {
        return Lambda.sqs(new IngestFunction(fixture.runner), event, TestContext.of("ingest", 30_000));
    }

    private static long count(String sql, Object... params) {
        return fixture.runner.database().queryOne(sql, row -> row.getLong(1), params).orElseThrow();
    }
}
