//! Responses: a JSON answer, or an API module's [`Answer`] as JSON or SSE, with the
//! delivery of an answer that hands tool calls out tracked to its last byte.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::common::Answer;

pub(super) fn json_response(status: u16, body: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body.to_string()),
    )
        .into_response()
}

/// Turns an API module's answer into an HTTP response; SSE events are sent one by one,
/// `chunk_delay` apart. `claim` (an answer that hands tool calls out) is completed once
/// the whole body went out, and marks the answer not delivered when the body is dropped
/// before (the connection went away).
pub(super) fn answer_response(
    answer: Answer,
    chunk_delay: Duration,
    claim: Option<crate::tally::Claim>,
) -> Response {
    match answer {
        Answer::Json(status, body) if claim.is_some() => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let text = body.to_string();
            // Sent with its length, as a plain JSON answer is.
            let length = text.len().to_string();
            let chunk = futures_util::stream::iter([Ok::<_, Infallible>(text)]);
            (
                status,
                [
                    (header::CONTENT_TYPE, "application/json".to_string()),
                    (header::CONTENT_LENGTH, length),
                ],
                Body::from_stream(Tracked::new(chunk, claim, Some(1))),
            )
                .into_response()
        }
        Answer::Json(status, body) => json_response(status, &body),
        Answer::Held(_) => json_response(503, &json!({"error": "held"})),
        Answer::Sse(events) => {
            let stream = futures_util::stream::iter(events.into_iter().enumerate()).then(
                move |(i, e)| async move {
                    if i > 0 && !chunk_delay.is_zero() {
                        tokio::time::sleep(chunk_delay).await;
                    }
                    // `event:` before `data:`, as the vendors send it.
                    let mut event = Event::default();
                    if let Some(name) = e.event {
                        event = event.event(name);
                    }
                    Ok::<_, Infallible>(event.data(e.data))
                },
            );
            Sse::new(Tracked::new(stream, claim, None)).into_response()
        }
    }
}

/// A body stream that completes its [`crate::tally::Claim`] when its last item went out
/// (the `items`-th, for a body sent with its length, which is not polled past it; else
/// when it ends), and drops it unfinished (not delivered) when it is dropped before.
struct Tracked<S> {
    inner: std::pin::Pin<Box<S>>,
    claim: Option<crate::tally::Claim>,
    left: Option<usize>,
}

impl<S> Tracked<S> {
    fn new(inner: S, claim: Option<crate::tally::Claim>, items: Option<usize>) -> Tracked<S> {
        Tracked {
            inner: Box::pin(inner),
            claim,
            left: items,
        }
    }
}

impl<S: futures_util::Stream> futures_util::Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<S::Item>> {
        let this = self.get_mut();
        let next = this.inner.as_mut().poll_next(cx);
        let last = match &next {
            std::task::Poll::Ready(None) => true,
            std::task::Poll::Ready(Some(_)) => match this.left.as_mut() {
                Some(left) => {
                    *left = left.saturating_sub(1);
                    *left == 0
                }
                None => false,
            },
            std::task::Poll::Pending => false,
        };
        if last && let Some(claim) = this.claim.take() {
            claim.complete();
        }
        next
    }
}
