package dev.runner.functions;

import com.amazonaws.services.lambda.runtime.events.APIGatewayV2HTTPEvent;
import com.amazonaws.services.lambda.runtime.events.SQSEvent;
import com.amazonaws.services.lambda.runtime.events.ScheduledEvent;
import dev.runner.http.ApiRequest;
import dev.runner.item.ItemJob;
import dev.runner.json.Json;
import dev.runner.queue.QueueMessage;
import dev.runner.run.RunJob;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Every events/ sample, as the functions read it, becomes what the core expects. */
class EventSamplesTest {

    @Test
    void webhookSampleBecomesARequestWithPathParametersHeadersAndBody() {
        ApiRequest request = ApiGatewayToCore.request(Events.load("webhook.json", APIGatewayV2HTTPEvent.class));
        assertEquals("POST", request.method());
        assertEquals("t-demo", request.pathParameter("tenantId"));
        assertNotNull(request.header("Webhook-Signature"));
        assertNotNull(request.header("webhook-id"));
        assertEquals(2, Json.parse(request.body()).size());
    }

    @Test
    void apiSamplesCarryTheBearerKeyAndRoute() {
        ApiRequest create = ApiGatewayToCore.request(Events.load("api-create-run.json", APIGatewayV2HTTPEvent.class));
        assertEquals("POST", create.method());
        assertEquals("/runs", create.path());
        assertEquals("Bearer local-dev-key", create.header("authorization"));
        ApiRequest get = ApiGatewayToCore.request(Events.load("api-get-run.json", APIGatewayV2HTTPEvent.class));
        assertEquals("GET", get.method());
        assertNotNull(get.pathParameter("runId"));
    }

    @Test
    void theIamSampleCarriesThePrincipalTheGatewayVerified() {
        ApiRequest signed = ApiGatewayToCore.request(Events.load("api-iam-session.json", APIGatewayV2HTTPEvent.class));
        assertEquals("arn:aws:iam::123456789012:user/runner-operator", signed.principal());
        assertEquals("/session", signed.path());
        assertNull(ApiGatewayToCore.request(Events.load("api-get-run.json", APIGatewayV2HTTPEvent.class)).principal(),
                "no authorizer in the request context, no principal, whatever the headers say");
    }

    @Test
    void sqsSamplesCarryTheirJobsAndSourceQueue() {
        List<QueueMessage> items = SqsEvents.messages(Events.load("sqs-item-job.json", SQSEvent.class));
        assertEquals("runner-items-manual", items.getFirst().sourceQueue());
        assertEquals(1, items.getFirst().receiveCount());
        assertEquals("lead-1", ItemJob.fromJson(Json.parse(items.getFirst().body())).externalId());
        RunJob run = RunJob.fromJson(Json.parse(SqsEvents.messages(Events.load("sqs-run-job.json", SQSEvent.class)).getFirst().body()));
        assertEquals("manual", run.trigger().wireName());
        QueueMessage dead = SqsEvents.messages(Events.load("sqs-dlq.json", SQSEvent.class)).getFirst();
        assertEquals("runner-items-dlq", dead.sourceQueue());
        assertNotNull(dead.attributes().get("error"));
        QueueMessage ingest = SqsEvents.messages(Events.load("sqs-ingest.json", SQSEvent.class)).getFirst();
        assertNotNull(ingest.body());
        assertNotNull(ingest.attributes().get("webhook-signature"), "the producer's signature, a message attribute");
        assertEquals("AIDAEXAMPLEPRODUCER01", ingest.systemAttributes().get("SenderId"), "the producer, as SQS saw it");
        assertNull(ingest.attributes().get("SenderId"), "never mixed with what a producer may write");
    }

    @Test
    void scheduledSampleIsAnEventBridgeTick() {
        ScheduledEvent event = Events.load("scheduled.json", ScheduledEvent.class);
        assertEquals("aws.events", event.getSource());
        assertEquals("Scheduled Event", event.getDetailType());
    }
}
