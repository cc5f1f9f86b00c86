import { Module } from '@nestjs/common';
import { SearchIndexer } from './search-indexer.service';

/** What a worker runs for `q`: the search indexer. */
@Module({ providers: [SearchIndexer] })
export class SearchIndexModule {}
