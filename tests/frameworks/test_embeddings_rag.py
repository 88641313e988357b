"""Retrieval over mockllm's embeddings, as RAG agents do it (docs/embeddings.md): LangChain's
`OpenAIEmbeddings` into an `InMemoryVectorStore`, LlamaIndex's `VectorStoreIndex` with its
`OpenAIEmbedding`, and an agent's tool loop whose `search_docs` tool searches such an index.
In each, the lexically closest of three documents ranks first for every query."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import llama_index.core
import openai
import pytest
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_openai import OpenAIEmbeddings
from llama_index.core import Document, VectorStoreIndex
from llama_index.embeddings.openai import OpenAIEmbedding

from mockllm import Session
from tests.support import ServerProcess

DOCS = [
    "Refunds are issued within 30 days of purchase to the original payment method.",
    "Reset your password from the account settings page using the emailed reset link.",
    "Our warehouse ships orders Monday to Friday; express shipping arrives next day.",
]
QUERIES = {
    "how many days until my refund is issued": DOCS[0],
    "I forgot my password, how do I reset it": DOCS[1],
    "does express shipping arrive the next day": DOCS[2],
}
# tiktoken's cl100k_base as llama-index-core ships it: LangChain tokenizes with it (its
# default check_embedding_ctx_length) and sends token arrays; nothing is downloaded.
TIKTOKEN = Path(llama_index.core.__file__).parent / "_static" / "tiktoken_cache"


@pytest.mark.parametrize("token_arrays", [True, False])
def test_langchain_in_memory_vector_store_ranks_the_closest_document_first(
    server: ServerProcess, session: str, mock: Session, monkeypatch: pytest.MonkeyPatch,
    token_arrays: bool,
) -> None:  # fmt: skip
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(TIKTOKEN))
    embeddings = OpenAIEmbeddings(
        model="text-embedding-3-small",
        base_url=f"{server.url}/v1",
        api_key="k",
        default_headers={"x-mockllm-session": session},
        check_embedding_ctx_length=token_arrays,
    )
    store = InMemoryVectorStore.from_texts(DOCS, embeddings)
    for query, wanted in QUERIES.items():
        assert store.similarity_search(query, k=1)[0].page_content == wanted, query
    sent = [e.request["input"] for e in mock.requests() if e.api == "openai-embeddings"]
    assert all(isinstance(i[0], list) == token_arrays for i in sent), sent


def test_llama_index_vector_store_index_retrieves_the_closest_document(
    server: ServerProcess, session: str, mock: Session
) -> None:
    embed = OpenAIEmbedding(
        model="text-embedding-3-small",
        api_base=f"{server.url}/v1",
        api_key="k",
        default_headers={"x-mockllm-session": session},
    )
    index = VectorStoreIndex.from_documents([Document(text=d) for d in DOCS], embed_model=embed)
    retriever = index.as_retriever(similarity_top_k=1)
    for query, wanted in QUERIES.items():
        assert retriever.retrieve(query)[0].node.get_content() == wanted, query
    logged = mock.requests()
    assert logged and all(e.api == "openai-embeddings" and e.turn is None for e in logged)
    assert mock.verdict().raw["side_requests"] == len(logged)  # counted, never judged


RAG = """
name: rag-agent
description: The model searches the docs, then answers from what the search returned.
turns:
  - reply:
      tool_calls: [{name: search_docs, arguments: {query: how many days until my refund is issued}}]
  - expect:
      tool_results: [{contains: Refunds are issued within 30 days}]
    reply: {text: "Refunds are issued within 30 days."}
"""
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_docs",
        "description": "Search the help-centre documents.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}


class Index:
    """The agent's retrieval: documents embedded once, a query embedded per search, ranked
    by cosine, through the same OpenAI client as the model."""

    def __init__(self, client: openai.OpenAI, docs: list[str]) -> None:
        self.client, self.docs = client, docs
        self.vectors = [d.embedding for d in self._embed(docs)]

    def _embed(self, texts: list[str]) -> list[Any]:
        return self.client.embeddings.create(model="text-embedding-3-small", input=texts).data

    def search(self, query: str) -> str:
        q = self._embed([query])[0].embedding
        scores = [sum(a * b for a, b in zip(q, v, strict=True)) for v in self.vectors]
        return self.docs[max(range(len(scores)), key=scores.__getitem__)]


def test_a_rag_agents_tool_loop_answers_from_what_its_index_found(
    server: ServerProcess, session: str, mock: Session
) -> None:
    mock.add_scenario(RAG)
    client = openai.OpenAI(base_url=f"{server.url}/s/rag-agent/{session}/v1", api_key="k")
    index = Index(client, DOCS)
    messages: list[Any] = [{"role": "user", "content": "When do I get my refund?"}]
    for _ in range(4):
        reply = client.chat.completions.create(model="gpt-4o", messages=messages, tools=[SEARCH])
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            break
        for call in message.tool_calls:
            query = json.loads(call.function.arguments)["query"]
            messages.append(
                {"role": "tool", "tool_call_id": call.id, "content": index.search(query)}
            )
    assert message.content == "Refunds are issued within 30 days."
    mock.assert_all_turns_served()
    mock.assert_clean_verdict()  # the expectation on turn 1 held: the right document came back
    verdict = mock.verdict()
    assert verdict.raw["side_requests"] == 2 and verdict.raw["requests"] == 2
