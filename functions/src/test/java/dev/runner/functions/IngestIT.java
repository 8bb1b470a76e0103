package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.SQSBatchResponse;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import dev.runner.http.ApiResponse;
import dev.runner.json.Json;
import dev.runner.security.StandardWebhooks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ingest queue through IngestFunction, with batches as Lambda hands them over and real Postgres behind: a
 * message acts for a tenant only when signed with its secret or sent by a SenderId bound to it; SQS's redeliveries
 * make nothing new; a message that cannot be taken is kept in dead_letters and never holds back its neighbours.
 */
class IngestIT {

    @RegisterExtension
    static final PipelineFixture fixture = new PipelineFixture(Map.of());

    @Test
    void aRedeliveredBatchMakesNoSecondRunNorNewItems() {
        var integration = fixture.integration(true);
        SQSEvent batch = batch(signed(integration, "redelivered-1"), signed(integration, "redelivered-2"), signed(integration, "redelivered-3"));

        assertTrue(ingest(batch).getBatchItemFailures().isEmpty());
        List<String> itemIds = itemIds(integration.tenantId());
        batch.getRecords().forEach(record -> record.getAttributes().put("ApproximateReceiveCount", "2"));
        assertTrue(ingest(batch).getBatchItemFailures().isEmpty());

        assertEquals(1, runs(integration.tenantId()));
        assertEquals(3, itemIds.size());
        assertEquals(itemIds, itemIds(integration.tenantId()), "the same items, not new ones under new ids");
    }

    @Test
    void aThreeKilobyteExternalIdIsKeptInDeadLettersWhileItsNeighboursAreAccepted() {
        var integration = fixture.integration(true);
        var tooLong = signed(integration, "x".repeat(3000));
        SQSEvent batch = batch(signed(integration, "neighbour-1"), tooLong, signed(integration, "neighbour-2"));

        assertTrue(ingest(batch).getBatchItemFailures().isEmpty(), "nothing to retry: the long one is kept, the others taken");

        assertEquals(List.of("neighbour-1", "neighbour-2"), externalIds(integration.tenantId()));
        assertTrue(reasonFor(tooLong.getBody()).contains("longer than 512"), reasonFor(tooLong.getBody()));
    }

    @Test
    void aMessageTheStoreRefusesIsKeptWhileItsNeighboursInTheSameRunGoThrough() {
        var integration = fixture.integration(true);
        String poison = "poison-" + UUID.randomUUID();
        // A refusal no validation foresaw: Postgres itself rejects this one row as bad data (SQLSTATE 22023).
        String trigger = "refuse_" + poison.replace("-", "_");
        fixture.runner.database().update("""
                create function %s() returns trigger language plpgsql as $$
                begin raise exception 'refused for the test' using errcode = '22023'; end $$
                """.formatted(trigger));
        fixture.runner.database().update("create trigger %s before insert on execution_items for each row when (new.external_id = '%s') execute function %s()"
                .formatted(trigger, poison, trigger));
        try {
            var refused = signed(integration, poison);
            SQSEvent batch = batch(signed(integration, "fine-1"), refused, signed(integration, "fine-2"));

            assertTrue(ingest(batch).getBatchItemFailures().isEmpty());

            assertEquals(List.of("fine-1", "fine-2"), externalIds(integration.tenantId()));
            assertTrue(reasonFor(refused.getBody()).contains("refused by the store"), reasonFor(refused.getBody()));
        } finally {
            fixture.runner.database().update("drop trigger %s on execution_items".formatted(trigger));
            fixture.runner.database().update("drop function %s()".formatted(trigger));
        }
    }

    @Test
    void aNewMessageCarryingAnExternalIdSeenBeforeIsAnUpdateAndIsProcessed() {
        var integration = fixture.integration(true);
        assertTrue(ingest(batch(signed(integration, "same-record"))).getBatchItemFailures().isEmpty());
        assertTrue(ingest(batch(signed(integration, "same-record"))).getBatchItemFailures().isEmpty(), "a new message, same externalId");
        assertEquals(2, runs(integration.tenantId()));
        assertEquals(List.of("same-record", "same-record"), externalIds(integration.tenantId()));
    }

    @Test
    void twoMessagesOfOneBatchForTheSameRecordAreBothProcessed() {
        var integration = fixture.integration(true);
        assertTrue(ingest(batch(signed(integration, "twice"), signed(integration, "twice"))).getBatchItemFailures().isEmpty());
        assertEquals(2, runs(integration.tenantId()), "an externalId is told apart within a run, so the update gets a run of its own");
        assertEquals(List.of("twice", "twice"), externalIds(integration.tenantId()));
    }

    @Test
    void aSignedMessageSentAgainUnderANewMessageIdIsNotProcessedAgain() {
        var integration = fixture.integration(true);
        var original = signed(integration, "replayed");
        var replay = signed(integration, "replayed");
        replay.setMessageAttributes(original.getMessageAttributes());
        replay.setBody(original.getBody());

        ingest(batch(original));
        ingest(batch(replay));

        assertEquals(1, runs(integration.tenantId()), "caught by its webhook-id");
    }

    @Test
    void aWebhookIdAlreadyDeliveredAsAWebhookIsNotProcessedAgainFromTheQueue() {
        var integration = fixture.integration(true);
        String body = envelope(integration, "crossed");
        String id = "msg_" + UUID.randomUUID();
        var webhook = fixture.webhookEvent(integration, body, id);
        assertEquals(202, fixture.webhook(webhook).getStatusCode());

        var message = record(body, Map.of("webhook-id", id, "webhook-timestamp", webhook.getHeaders().get("webhook-timestamp"),
                "webhook-signature", webhook.getHeaders().get("webhook-signature")), null, Instant.now());
        assertTrue(ingest(batch(message)).getBatchItemFailures().isEmpty());

        assertEquals(1, runs(integration.tenantId()));
    }

    @Test
    void unsignedMessagesOfAnUnboundSenderAreKeptWithTheReason() {
        var integration = fixture.integration(true);
        var unsigned = record(envelope(integration, "unsigned"), Map.of(), "AIDAUNBOUNDPRODUCER", Instant.now());
        var noSender = record(envelope(integration, "no-sender"), Map.of(), null, Instant.now());

        assertTrue(ingest(batch(unsigned, noSender)).getBatchItemFailures().isEmpty());

        assertEquals(0, runs(integration.tenantId()));
        assertTrue(reasonFor(unsigned.getBody()).contains("unbound"), reasonFor(unsigned.getBody()));
        assertTrue(reasonFor(unsigned.getBody()).contains("AIDAUNBOUNDPRODUCER may not act for tenant"), reasonFor(unsigned.getBody()));
        assertTrue(reasonFor(noSender.getBody()).contains("no SenderId"), reasonFor(noSender.getBody()));
    }

    @Test
    void aSenderIdSpoofedAsAMessageAttributeBindsNothing() {
        var integration = fixture.integration(true);
        String sender = "AIDA" + UUID.randomUUID().toString().replace("-", "").toUpperCase();
        bind(sender, integration.tenantId());
        var spoofed = record(envelope(integration, "spoofed"), Map.of("SenderId", sender), "AIDASOMEONEELSE", Instant.now());

        ingest(batch(spoofed));

        assertEquals(0, runs(integration.tenantId()));
        assertTrue(reasonFor(spoofed.getBody()).contains("unbound"), reasonFor(spoofed.getBody()));
    }

    @Test
    void badSignaturesAreKeptWithTheReason() {
        var integration = fixture.integration(true);
        var otherSecret = record(envelope(integration, "other-secret"), StandardWebhooks.headers(List.of("whsec_b3RoZXItc2VjcmV0LTAxMjM0NTY3"),
                "msg_other", Instant.now().getEpochSecond(), envelope(integration, "other-secret").getBytes(StandardCharsets.UTF_8)), null, Instant.now());
        var tampered = signed(integration, "tampered");
        tampered.setBody(tampered.getBody().replace("tampered", "tampere2"));
        var forAnotherTenant = signed(integration, "elsewhere");
        forAnotherTenant.setBody(forAnotherTenant.getBody().replace(integration.tenantId(), integration.tenantId() + "-x"));

        assertTrue(ingest(batch(otherSecret, tampered, forAnotherTenant)).getBatchItemFailures().isEmpty());

        assertEquals(0, runs(integration.tenantId()));
        assertTrue(reasonFor(otherSecret.getBody()).contains("signature refused (mismatch)"), reasonFor(otherSecret.getBody()));
        assertTrue(reasonFor(tampered.getBody()).contains("signature refused (mismatch)"), reasonFor(tampered.getBody()));
        assertTrue(reasonFor(forAnotherTenant.getBody()).contains("has no integration"), reasonFor(forAnotherTenant.getBody()));
    }

    @Test
    void aSignatureIsFreshWhenSqsTookTheMessageNotWhenItIsReceived() {
        var integration = fixture.integration(true);
        long signedAt = Instant.now().getEpochSecond() - 3600;
        String waitedBody = envelope(integration, "waited-an-hour");
        var waited = record(waitedBody, StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + UUID.randomUUID(), signedAt,
                waitedBody.getBytes(StandardCharsets.UTF_8)), null, Instant.ofEpochSecond(signedAt + 1));
        String staleBody = envelope(integration, "sent-stale");
        var stale = record(staleBody, StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + UUID.randomUUID(), signedAt,
                staleBody.getBytes(StandardCharsets.UTF_8)), null, Instant.now());

        ingest(batch(waited, stale));

        assertEquals(List.of("waited-an-hour"), externalIds(integration.tenantId()));
        assertTrue(reasonFor(stale.getBody()).contains("signature refused (stale)"), reasonFor(stale.getBody()));
    }

    @Test
    void aSenderBoundToTheTenantActsForItUntilUnbound() {
        var integration = fixture.integration(true);
        var other = fixture.integration(true);
        String sender = "AROA" + UUID.randomUUID().toString().replace("-", "").toUpperCase() + ":producer-session";
        bind(sender, integration.tenantId());

        var bound = record(envelope(integration, "by-sender"), Map.of(), sender, Instant.now());
        var elsewhere = record(envelope(other, "by-sender-elsewhere"), Map.of(), sender, Instant.now());
        assertTrue(ingest(batch(bound, elsewhere)).getBatchItemFailures().isEmpty());
        assertEquals(List.of("by-sender"), externalIds(integration.tenantId()));
        assertEquals(0, runs(other.tenantId()));

        assertEquals(200, fixture.api("DELETE", "/ingest-producers/" + sender, null).status());
        var after = record(envelope(integration, "after-unbinding"), Map.of(), sender, Instant.now());
        ingest(batch(after));
        assertEquals(List.of("by-sender"), externalIds(integration.tenantId()));
        assertTrue(reasonFor(after.getBody()).contains("unbound"));
    }

    @Test
    void producerBindingsAreSetReadAndRemovedThroughTheAdminApi() {
        String sender = "AIDA" + UUID.randomUUID().toString().replace("-", "").toUpperCase();
        ApiResponse put = fixture.api("PUT", "/ingest-producers/" + sender, Json.parse("{\"tenants\":[\"t-1\",\"t-2\",\"t-1\"]}"));
        assertEquals(200, put.status(), put.body());
        assertEquals("{\"senderId\":\"" + sender + "\",\"tenants\":[\"t-1\",\"t-2\"]}", put.body());
        assertEquals(put.body(), fixture.api("GET", "/ingest-producers/" + sender, null).body());

        assertEquals(400, fixture.api("PUT", "/ingest-producers/" + sender, Json.parse("{\"tenants\":[]}")).status());
        assertEquals(400, fixture.api("PUT", "/ingest-producers/" + sender, Json.parse("{\"tenants\":[\"not a tenant\"]}")).status());
        assertEquals(400, fixture.api("PUT", "/ingest-producers/bad%20sender", Json.parse("{\"tenants\":[\"t-1\"]}")).status());
        var anonymous = fixture.runner.api().handle(new dev.runner.http.ApiRequest("GET", "/ingest-producers/" + sender, Map.of(),
                Map.of(), Map.of(), null));
        assertEquals(401, anonymous.status(), "admin only");

        assertEquals(200, fixture.api("DELETE", "/ingest-producers/" + sender, null).status());
        assertEquals(404, fixture.api("GET", "/ingest-producers/" + sender, null).status());
        assertEquals(404, fixture.api("DELETE", "/ingest-producers/" + sender, null).status());
    }

    // ------------------------------------------------------------------ helpers

    static String envelope(PipelineFixture.Integration integration, String externalId) {
        return Json.write(Json.object().put("tenantId", integration.tenantId()).put("integrationKey", integration.integrationKey())
                .put("handlerKey", integration.handlerKey()).put("externalId", externalId)
                .set("payload", Json.object().put("name", "Ada")));
    }

    /** An envelope signed now with the integration's secret, as docs/ingest.md tells producers to. */
    static SQSEvent.SQSMessage signed(PipelineFixture.Integration integration, String externalId) {
        String body = envelope(integration, externalId);
        return record(body, StandardWebhooks.headers(List.of(integration.webhookSecret()), "msg_" + UUID.randomUUID(),
                Instant.now().getEpochSecond(), body.getBytes(StandardCharsets.UTF_8)), null, Instant.now());
    }

    /** A record as Lambda's event source mapping hands it over: the sample's shape, these attributes. */
    static SQSEvent.SQSMessage record(String body, Map<String, String> attributes, String senderId, Instant sentAt) {
        String messageId = UUID.randomUUID().toString();
        Map<String, String> system = new HashMap<>();
        system.put("ApproximateReceiveCount", "1");
        system.put("SentTimestamp", Long.toString(sentAt.toEpochMilli()));
        if (senderId != null) {
            system.put("SenderId", senderId);
        }
        return Lambda.sqsRecord(messageId, "rh-" + messageId, body, fixture.stack.arn("ingest"), system, attributes);
    }

    private static SQSEvent batch(SQSEvent.SQSMessage... records) {
        return Lambda.sqsEvent(new ArrayList<>(List.of(records)));
    }

    private static SQSBatchResponse ingest(SQSEvent event) {
        return Lambda.sqs(new IngestFunction(fixture.runner), event, TestContext.of("ingest", 30_000));
    }

    private static void bind(String sender, String tenantId) {
        ApiResponse response = fixture.api("PUT", "/ingest-producers/" + sender, Json.object().set("tenants", Json.array().add(tenantId)));
        assertEquals(200, response.status(), response.body());
    }

    private static long runs(String tenantId) {
        return fixture.runner.database().queryOne("select count(*) from runs where tenant_id = ?", row -> row.getLong(1), tenantId).orElseThrow();
    }

    private static List<String> itemIds(String tenantId) {
        return fixture.runner.database().query("select item_id::text from execution_items where tenant_id = ? order by item_id",
                row -> row.getString(1), tenantId);
    }

    private static List<String> externalIds(String tenantId) {
        return fixture.runner.database().query("select external_id from execution_items where tenant_id = ? order by external_id",
                row -> row.getString(1), tenantId);
    }

    private static String reasonFor(String body) {
        return fixture.runner.database().queryOne("select reason from dead_letters where body = ? order by id desc limit 1",
                row -> row.getString(1), body).orElse("(not kept)");
    }
}
