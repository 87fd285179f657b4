//! Integration tests of the scripted model: every request goes over loopback TCP to a
//! server started in the test, with request shapes modelled on what each CLI sends.

mod anthropic;
mod chat;
mod common;
mod gemini;
mod hostile;
mod misc;
mod responses;
mod script;
mod threads;
