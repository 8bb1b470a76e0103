package dev.runner.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.runner.json.Json;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.devtools.NetworkInterceptor;
import org.openqa.selenium.remote.http.Contents;
import org.openqa.selenium.remote.http.HttpRequest;
import org.openqa.selenium.remote.http.HttpResponse;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

/**
 * Answers, inside the browser (Chrome DevTools' Fetch interception), the routes that
 * docs/console-api.md adds and the runtime does not serve yet, with data shaped as the contract
 * says; every other request goes to the real runtime. So the console's views for those routes run
 * in a real browser now, and the requests they send are recorded for the tests to check.
 */
final class ContractFixtures implements AutoCloseable {

    /** A request the page sent to a fixture route. */
    record Seen(String method, String path, Map<String, String> query, String body) {}

    static final String RUN_A = "01a22d1c-0000-7000-8000-0000000000a1";
    static final String RUN_B = "01a22d1c-0000-7000-8000-0000000000b2";
    static final String RUN_C = "01a22d1c-0000-7000-8000-0000000000c3";
    static final String HOSTILE_ERROR = "<script>window.__pwned = 4</script>handler answered 500";
    static final String HOSTILE_ID = "<i>ext-1</i>";

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final Map<Pattern, JsonNode> answers = new LinkedHashMap<>();
    private final NetworkInterceptor interceptor;

    private ContractFixtures(WebDriver driver, JsonNode session) {
        Instant now = Instant.now();
        answer("GET /session", session);
        answer("GET /runs\\?.*before=cursor-2.*", page("runs", "null", run(RUN_C, "t-c", "crm-c", "invoices", "completed", "manual", 2,
                counts(3, 0, 0, 3, 0, 0, 0), now.minusSeconds(3600), now.minusSeconds(3500))));
        answer("GET /runs(\\?.*)?", page("runs", "\"cursor-2\"",
                run(RUN_A, "t-a", "crm-a", "contacts", "running", "webhook", 1, counts(40, 5, 5, 25, 0, 5, 0), now.minusSeconds(60), null),
                run(RUN_B, "t-b", "crm-b", "orders", "completed_with_errors", "schedule", 5, counts(10, 0, 0, 8, 0, 2, 0),
                        now.minusSeconds(600), now.minusSeconds(500))));
        answer("GET /items(\\?.*)?", page("items", "null",
                deadItem("0190aaaa-0000-7000-8000-000000000001", HOSTILE_ID, RUN_A, "t-a", "crm-a", "contacts", now.minusSeconds(30)),
                deadItem("0190aaaa-0000-7000-8000-000000000002", "order-7", RUN_B, "t-b", "crm-b", "orders", now.minusSeconds(400))));
        answer("POST /items/[^/?]+/redrive", Json.parse("{\"itemId\":\"0190aaaa-0000-7000-8000-000000000001\",\"runId\":\"" + RUN_A + "\",\"redriven\":1}"));
        answer("POST /redrive", Json.parse("{\"redriven\":3,\"runs\":2,\"remaining\":0}"));
        answer("GET /handlers", Json.parse("""
                {"handlers":[
                 {"integrationKey":"crm-a","handlerKey":"contacts","paused":false,"pausedAt":null,"parked":0,
                  "breaker":{"state":"closed","failures":0,"openedAt":null,"halfOpenAt":null},
                  "concurrency":{"inUse":4,"limit":5},"rate":{"usedLastMinute":100,"limitPerMinute":6000}},
                 {"integrationKey":"crm-b","handlerKey":"orders","paused":false,"pausedAt":null,"parked":0,
                  "breaker":{"state":"open","failures":5,"openedAt":"%s","halfOpenAt":"%s"},
                  "concurrency":{"inUse":0,"limit":5},"rate":{"usedLastMinute":20,"limitPerMinute":600}},
                 {"integrationKey":"crm-c","handlerKey":"invoices","paused":true,"pausedAt":"%s","parked":12,
                  "breaker":{"state":"half-open","failures":0,"openedAt":"%s","halfOpenAt":"%s"},
                  "concurrency":{"inUse":1,"limit":null},"rate":{"usedLastMinute":600,"limitPerMinute":600}}
                ]}""".formatted(now.minusSeconds(10), now.plusSeconds(20), now.minusSeconds(300), now.minusSeconds(40), now.minusSeconds(10))));
        answer("POST /handlers/[^/]+/[^/]+/pause", Json.parse("{\"integrationKey\":\"crm-a\",\"handlerKey\":\"contacts\",\"paused\":true}"));
        answer("POST /handlers/[^/]+/[^/]+/resume",
                Json.parse("{\"integrationKey\":\"crm-c\",\"handlerKey\":\"invoices\",\"paused\":false,\"wasPaused\":true,\"resumed\":12}"));
        answer("GET /tenants(\\?.*)?", Json.parse("""
                {"tenants":[
                 {"tenantId":"t-a","integrations":["crm-a"],"window":{"usedLastMinute":120,"limitPerMinute":1000},"deferred":40},
                 {"tenantId":"t-b","integrations":["crm-b","crm-c"],"window":{"usedLastMinute":1000,"limitPerMinute":1000},"deferred":2500}
                ],"next":null}"""));
        answer("GET /queues", Json.parse("""
                {"queues":[
                 {"name":"runner-items-webhook","kind":"items","tier":"webhook","priority":1,"visible":0,"inFlight":2,"delayed":0,"oldestAgeSeconds":3},
                 {"name":"runner-items-manual","kind":"items","tier":"manual","priority":2,"visible":120,"inFlight":10,"delayed":5,"oldestAgeSeconds":95},
                 {"name":"runner-items-schedule","kind":"items","tier":"schedule","priority":5,"visible":20000,"inFlight":50,"delayed":18000,"oldestAgeSeconds":5400},
                 {"name":"runner-items-dlq","kind":"dlq","visible":4,"inFlight":0,"delayed":0,"oldestAgeSeconds":null}
                ]}"""));
        answer("GET /metrics/items(\\?.*)?", metrics(now));
        this.interceptor = new NetworkInterceptor(driver, this::handle);
    }

    /** Intercepts from now until closed; {@code session} is what GET /session answers. */
    static ContractFixtures install(WebDriver driver, JsonNode session) {
        return new ContractFixtures(driver, session);
    }

    static JsonNode adminSession() {
        return Json.parse("""
                {"scope":"admin","tenantId":null,"can":["runs:read","runs:redrive","items:read","items:redrive",
                 "handlers:read","handlers:pause","tenants:read","queues:read","metrics:read"]}""");
    }

    static JsonNode tenantSession(String tenantId) {
        return Json.object().put("scope", "tenant").put("tenantId", tenantId)
                .set("can", Json.parse("[\"runs:read\",\"runs:redrive\",\"items:read\",\"items:redrive\",\"tenants:read\"]"));
    }

    /** Requests the page sent to fixture routes, oldest first. */
    List<Seen> seen() {
        return List.copyOf(seen);
    }

    /** Totals of the metrics fixture, as the chart legend should show them. */
    static int metricsTotal(JsonNode metrics, String field) {
        int total = 0;
        for (JsonNode minute : metrics.path("minutes")) {
            total += minute.path(field).asInt();
        }
        return total;
    }

    JsonNode metricsAnswer() {
        return answers.entrySet().stream().filter(e -> e.getKey().pattern().startsWith("GET /metrics")).findFirst().orElseThrow().getValue();
    }

    @Override
    public void close() {
        interceptor.close();
    }

    private HttpResponse handle(HttpRequest request) {
        URI uri = URI.create(request.getUri());
        String target = request.getMethod() + " " + uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        for (var answer : answers.entrySet()) {
            if (answer.getKey().matcher(target).matches()) {
                seen.add(new Seen(request.getMethod().toString(), uri.getRawPath(), query(uri.getRawQuery()), Contents.string(request)));
                return new HttpResponse()
                        .setStatus(request.getMethod().toString().equals("POST") ? 202 : 200)
                        .addHeader("Content-Type", "application/json")
                        .setContent(Contents.utf8String(Json.write(answer.getValue())));
            }
        }
        return NetworkInterceptor.PROCEED_WITH_REQUEST;
    }

    private void answer(String route, JsonNode body) {
        answers.put(Pattern.compile(route), body);
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> query = new LinkedHashMap<>();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int equals = pair.indexOf('=');
                query.put(decode(equals < 0 ? pair : pair.substring(0, equals)), equals < 0 ? "" : decode(pair.substring(equals + 1)));
            }
        }
        return query;
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    private static JsonNode page(String field, String next, JsonNode... rows) {
        ObjectNode page = Json.object();
        ArrayNode array = page.putArray(field);
        for (JsonNode row : rows) {
            array.add(row);
        }
        page.set("next", Json.parse(next));
        return page;
    }

    private static ObjectNode counts(int total, int queued, int processing, int succeeded, int retrying, int dead, int parked) {
        return Json.object().put("total", total).put("queued", queued).put("processing", processing).put("succeeded", succeeded)
                .put("retrying", retrying).put("dead", dead).put("parked", parked);
    }

    private static JsonNode run(String runId, String tenantId, String integrationKey, String handlerKey, String status, String trigger,
                                int priority, ObjectNode counts, Instant createdAt, Instant finishedAt) {
        ObjectNode run = Json.object().put("runId", runId).put("tenantId", tenantId).put("integrationKey", integrationKey)
                .put("handlerKey", handlerKey).put("direction", "inbound").put("status", status).put("trigger", trigger)
                .put("priority", priority);
        run.set("counts", counts);
        run.put("createdAt", createdAt.toString()).put("finishedAt", finishedAt == null ? null : finishedAt.toString());
        return run;
    }

    private static JsonNode deadItem(String itemId, String externalId, String runId, String tenantId, String integrationKey,
                                     String handlerKey, Instant dlqAt) {
        ObjectNode item = Json.object().put("itemId", itemId).put("externalId", externalId).put("status", "dead").put("attempts", 3)
                .put("lastError", HOSTILE_ERROR);
        item.putArray("history").add(Json.object().put("attempt", 3).put("at", dlqAt.toString()).put("error", HOSTILE_ERROR));
        item.put("dlqAt", dlqAt.toString()).put("updatedAt", dlqAt.toString()).put("runId", runId).put("tenantId", tenantId)
                .put("integrationKey", integrationKey).put("handlerKey", handlerKey);
        return item;
    }

    /** 60 minutes ending with the current one, with varied but fixed figures. */
    private static JsonNode metrics(Instant now) {
        Instant first = now.truncatedTo(ChronoUnit.MINUTES).minus(59, ChronoUnit.MINUTES);
        ObjectNode answer = Json.object().put("stepSeconds", 60);
        ArrayNode minutes = answer.putArray("minutes");
        for (int i = 0; i < 60; i++) {
            int rate = i % 15 < 5 ? 8 : 0;
            int tenant = i >= 40 && i < 50 ? 30 : 0;
            int breaker = i == 20 || i == 21 ? 12 : 0;
            ObjectNode minute = Json.object().put("at", first.plus(i, ChronoUnit.MINUTES).toString())
                    .put("succeeded", 40 + (i * 7) % 25).put("retried", i % 6 == 0 ? 4 : 0).put("dead", i % 20 == 0 ? 2 : 0)
                    .put("deferred", rate + tenant + breaker);
            minute.set("deferredBy", Json.object().put("breaker_open", breaker).put("breaker_probing", 0)
                    .put("handler_rate", rate).put("handler_concurrency", 0).put("tenant_limit", tenant));
            minutes.add(minute);
        }
        return answer;
    }
}
