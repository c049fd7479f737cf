"""The read path: the seed's 12 stages of hybrid retrieval and four more, a module each."""

from memoryd.retrieve.config import DEFAULT_RECIPE, SearchConfig
from memoryd.retrieve.pipeline import Retriever, SearchRequest, SpaceRef

__all__ = ["DEFAULT_RECIPE", "Retriever", "SearchConfig", "SearchRequest", "SpaceRef"]
