"""The read path: the 12 stages of hybrid retrieval, one module a stage."""

from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig
from memoryd.retrieve.pipeline import Retriever, SearchRequest, SpaceRef

__all__ = ["DEFAULT_RECIPE", "Retriever", "SearchConfig", "SearchRequest", "SpaceRef"]
